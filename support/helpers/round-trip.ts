/**
 * The round-trip sentence set: everyday sentences of common words, read by the default TTS voice and transcribed
 * by the default STT. Documented with its measured WER in docs/speech.md.
 */
export const ROUND_TRIP_SENTENCES = [
  'please call me back when you get home tonight',
  'we need to buy milk bread and eggs from the store',
  'i would like to book a table for two people',
  'turn left at the next corner and go straight ahead',
  'the train to new york leaves at seven in the evening',
  'thank you very much for your help with this project',
  'can you tell me the way to the nearest hospital',
  'my phone number is five five five one two three four',
  'the weather is nice today in the city of boston',
  'the children are playing in the park after school',
];

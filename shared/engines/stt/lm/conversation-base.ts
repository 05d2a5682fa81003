/**
 * What callers say to any agent, whatever it does: greetings, yes and no, asking again, numbers, days, months,
 * times, dates and spelled letters. It goes into every per-agent model beside the agent's own words, so that the
 * words of a phone conversation are likely even when the agent's prompt never uses them. Written once, by hand,
 * from no test set.
 */
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = [
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november',
  'december',
]; // prettier-ignore

const PHRASES = `
hello. hi. hi there. hello, how are you. good morning. good afternoon. good evening. hey.
yes. yeah. yes please. yes that's right. that's correct. correct. sure. okay. ok. alright. of course. absolutely.
no. no thanks. no thank you. nope. not really. that's wrong. that's not right. i don't think so.
thank you. thanks. thanks a lot. thank you very much. thank you so much. great thanks.
goodbye. bye. bye bye. have a nice day. you too. talk to you later.
can you repeat that. could you repeat that please. sorry, what did you say. pardon. sorry. i didn't catch that.
can you say that again. say that again please. what was that. i'm sorry, i didn't hear you.
can you speak more slowly. one moment please. hold on. just a second. wait a minute. let me check.
i have a question. i want to ask about something. can you help me. i need some help. i would like to.
i'd like to. i want to. can i. could i. is it possible to. do you have. are you open. how much is it.
how much does it cost. what time is it. what time. when. where is it. where are you. how do i get there.
what is your address. what's your phone number. my name is. my phone number is. my email is.
my number is. it's spelled. let me spell it. that's spelled. the first letter is. as in.
i want to speak to a person. can i talk to someone. can i speak to a manager. transfer me please.
i want to make an appointment. i want to book. i want to cancel. i want to change. i want to reschedule.
this morning. this afternoon. this evening. tonight. today. tomorrow. yesterday. next week. this week.
in the morning. in the afternoon. in the evening. at night. at noon. at midnight. half past. quarter past.
quarter to. o'clock. a m. p m. early. late. later. soon. now. right now.
`;

/** The conversational base as text (textToSentences turns it into sentences). */
export function conversationBase(): string {
  const lines = [PHRASES];
  for (const d of DAYS) lines.push(`on ${d}. this ${d}. next ${d}. ${d} morning. ${d} afternoon. ${d} at ten.`);
  for (const m of MONTHS) lines.push(`in ${m}. ${m} first. ${m} the fifth. on ${m} twenty third.`);
  for (let n = 0; n <= 100; n++) lines.push(`${n}.`);
  for (let h = 1; h <= 12; h++) {
    lines.push(`at ${h}. at ${h} thirty. ${h} fifteen. ${h} forty five. ${h} a m. ${h} p m. ${h} o'clock.`);
  }
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 30]) {
    lines.push(`for ${n} people. ${n} of us. ${n} minutes. ${n} hours. ${n} days. ${n} dollars.`);
  }
  lines.push([...'abcdefghijklmnopqrstuvwxyz'].join(' '));
  lines.push('my number is five five five one two three four. zero one two three four five six seven eight nine.');
  return lines.join('\n');
}

/** A passing scenario (over a seeded bad line) and a broken agent whose scripted reply mentions prices. */
export const FRONT_DESK_SUITE = `
- name: asks for Saturday hours
  llm:
    replies: ["Yes, on Saturday we open at nine and close at noon."]
  impairments: {noiseSnrDb: 30, packetLossPct: 2, jitterMs: 20, seed: 7}
  turns:
    - say: "Hi, are you open on Saturday morning?"
      pauseAfterWords: {3: 400}
      expect: {replyMatches: "(?i)SATURDAY"}
  expect: {replyNeverMatches: "(?i)price", endedBy: caller}
- name: never talks about prices
  llm:
    replies: ["A cleaning is ninety dollars; our prices are on the website."]
  turns:
    - say: "Can I book a cleaning next week?"
  expect: {replyNeverMatches: "(?i)price"}
`;

/** Twilio's callbacks for one campaign attempt (signed with X-Twilio-Signature, served by the api). */
export const campaignCallPath = (callId: string, what: 'connect' | 'status') =>
  `/v1/campaigns/calls/${encodeURIComponent(callId)}/${what}`;

import { describe, expect, it } from 'vitest';
import { mulawBase64BytesToPcm, mulawBase64ToPcm, pcmToMulaw } from '../../shared/kernel/audio/mulaw.ts';
import { plainMediaFrame } from '../../workers/realtime/twilio/media-frame.ts';
import { parseTwilioMessage, ProtocolError } from '../../workers/realtime/twilio/serializer.ts';

/** What parsing gives: the event, or the protocol error's kind. */
function outcome(fn: () => unknown): unknown {
  try {
    return { ok: fn() };
  } catch (e) {
    return { error: e instanceof ProtocolError ? e.kind : String(e) };
  }
}

/**
 * The socket's bytes take the fast path; the same text as a string takes the general one (JSON.parse, then the
 * hand check or the schema). Both must agree on every input.
 */
function expectSameAsGeneral(text: string | Buffer): void {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  expect(outcome(() => parseTwilioMessage(bytes, false))).toEqual(
    outcome(() => parseTwilioMessage(bytes.toString('utf8'), false)),
  );
}

/** A deterministic generator (mulberry32), so a failure repeats. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function speech(samples: number, seed: number): Buffer {
  const r = rng(seed);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round((r() * 2 - 1) * 20000), i * 2);
  return pcm;
}

/** A media message as Twilio writes it (compact JSON, Twilio's key order). */
function twilioFrame(payload: string, seq = 4, ts = 60): string {
  return (
    `{"event":"media","sequenceNumber":"${seq}","media":{"track":"inbound","chunk":"${seq - 1}",` +
    `"timestamp":"${ts}","payload":"${payload}"},"streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0"}`
  );
}

describe('Twilio media frames read from the socket bytes', () => {
  it('decodes a real frame on the fast path, to the exact samples μ-law carries', () => {
    const mulaw = pcmToMulaw(speech(160, 1));
    const frame = plainMediaFrame(Buffer.from(twilioFrame(mulaw.toString('base64'), 7, 120)));
    expect(frame).not.toBeNull();
    expect(frame).toEqual({
      event: 'media',
      pcm: mulawBase64ToPcm(mulaw.toString('base64')),
      timestampMs: 120,
      track: 'inbound',
    });
    // μ-law → PCM → μ-law is the identity for every byte: the decoded samples are exactly the frame's.
    expect(pcmToMulaw(frame!.pcm)).toEqual(mulaw);
    expectSameAsGeneral(twilioFrame(mulaw.toString('base64')));
  });

  it('takes other key orders and JSON whitespace, and leaves the rest to the general path', () => {
    const payload = pcmToMulaw(speech(160, 2)).toString('base64');
    const fast = [
      JSON.stringify({
        event: 'media',
        sequenceNumber: '3',
        streamSid: 'MZ1',
        media: { track: 'inbound', chunk: '1', timestamp: '20', payload },
      }),
      JSON.stringify(
        {
          streamSid: 'MZ1',
          media: { payload, timestamp: '020', chunk: '1', track: 'outbound' },
          sequenceNumber: '3',
          event: 'media',
        },
        null,
        2,
      ),
      ` \r\n\t${twilioFrame(payload)}\n`,
      twilioFrame(''),
      twilioFrame('//8='),
      twilioFrame('/w=='),
      twilioFrame('//8'),
      twilioFrame(payload).replace('"timestamp":"60"', '"timestamp":"123456789012345678901234"'),
    ];
    for (const text of fast) {
      expect(plainMediaFrame(Buffer.from(text))).not.toBeNull();
      expectSameAsGeneral(text);
    }
    const general = [
      twilioFrame(payload).replace('"event":"media"', '"event":"\\u006dedia"'), // an escape: JSON.parse decides
      twilioFrame(payload).replace('"track":"inbound"', '"track":"inbound é"'), // non-ASCII
      twilioFrame(payload).replace('"track":"inbound"', '"track":"in\tbound"'), // a raw tab: invalid JSON
      twilioFrame(payload).replace('}', ',"extra":"1"}'), // extra keys: allowed, by the general path
      twilioFrame(payload).replace('"streamSid"', '"extra":{"a":[1,2]},"streamSid"'),
      twilioFrame(payload).replace('{"event":"media"', '{"event":"media","event":"mark"'), // duplicate key
      twilioFrame(payload).replace('"chunk":"3"', '"chunk":"3","chunk":"x"'),
      twilioFrame(payload).replace('"chunk":"3"', '"chunk":3'),
      twilioFrame(payload).replace('"timestamp":"60"', '"timestamp":"6.0"'),
      twilioFrame(payload).replace('"timestamp":"60"', '"timestamp":""'),
      twilioFrame(payload).replace('"sequenceNumber":"4"', '"sequenceNumber":"-4"'),
      twilioFrame('not base64!'),
      twilioFrame('//8=='.repeat(2)),
      twilioFrame('/===='),
      twilioFrame(payload).replace('"streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0"', '"streamSid":null'),
      twilioFrame(payload).replace('"event":"media"', '"event":"mark"'),
      twilioFrame(payload) + 'x',
      twilioFrame(payload) + '{}',
      '\ufeff' + twilioFrame(payload),
      twilioFrame(payload).slice(0, -1),
      '{}',
      '{"event":"media"}',
      '[]',
      '"media"',
      '{"event":"connected","protocol":"Call","version":"1.0.0"}',
    ];
    for (const text of general) {
      expect(plainMediaFrame(Buffer.from(text))).toBeNull();
      expectSameAsGeneral(text);
    }
  });

  it('agrees with the general path on thousands of mutated frames', () => {
    const r = rng(42);
    const base = Buffer.from(twilioFrame(pcmToMulaw(speech(160, 3)).toString('base64')));
    const alphabet = Buffer.from('{}[]":,\\ \t\n0123456789=+/aAzZ-.é\u0000', 'utf8');
    let fast = 0;
    for (let n = 0; n < 4000; n++) {
      const b = Buffer.from(base);
      const edits = 1 + Math.floor(r() * 3);
      let m = b;
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(r() * m.length);
        const byte = alphabet[Math.floor(r() * alphabet.length)]!;
        const op = r();
        if (op < 0.5) m[at] = byte;
        else if (op < 0.75) m = Buffer.concat([m.subarray(0, at), Buffer.from([byte]), m.subarray(at)]);
        else m = Buffer.concat([m.subarray(0, at), m.subarray(at + 1)]);
      }
      if (plainMediaFrame(m)) fast++;
      expectSameAsGeneral(m);
    }
    // Mutations inside the payload, the digits or the stream id keep many frames plain: both paths are exercised.
    expect(fast).toBeGreaterThan(100);
  });

  it('decodes base64 from bytes exactly as from a string, valid or not', () => {
    const r = rng(7);
    const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=!';
    for (let n = 0; n < 2000; n++) {
      const len = Math.floor(r() * 24);
      let s = '';
      for (let i = 0; i < len; i++) s += chars[Math.floor(r() * (r() < 0.97 ? 64 : chars.length))];
      const padded = Buffer.from(`xx${s}yy`, 'latin1');
      expect(mulawBase64BytesToPcm(padded, 2, 2 + s.length)).toEqual(mulawBase64ToPcm(s));
    }
  });
});

import { describe, expect, it } from 'vitest';
import { pcmToMulaw } from '../../shared/kernel/audio/mulaw.ts';
import {
  clearMessage,
  markMessage,
  mediaMessage,
  parseTwilioMessage,
  ProtocolError,
  TwilioFlow,
} from '../../workers/realtime/twilio/serializer.ts';

const start = {
  event: 'start',
  sequenceNumber: '1',
  streamSid: 'MZ123',
  start: {
    accountSid: 'AC1',
    streamSid: 'MZ123',
    callSid: 'CA1',
    tracks: ['inbound'],
    customParameters: { token: 'abc' },
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
  },
};

function kindOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return e instanceof ProtocolError ? e.kind : 'other';
  }
}

describe('Twilio serializer', () => {
  it('decodes the Twilio events exactly as sent', () => {
    expect(parseTwilioMessage('{"event":"connected","protocol":"Call","version":"1.0.0"}', false)).toEqual({
      event: 'connected',
    });
    expect(parseTwilioMessage(JSON.stringify(start), false)).toEqual({
      event: 'start',
      streamSid: 'MZ123',
      callSid: 'CA1',
      accountSid: 'AC1',
      customParameters: { token: 'abc' },
    });
    const pcm = Buffer.alloc(320);
    for (let i = 0; i < 160; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin(i / 5)), i * 2);
    const payload = pcmToMulaw(pcm).toString('base64');
    const media = parseTwilioMessage(
      JSON.stringify({
        event: 'media',
        sequenceNumber: '3',
        streamSid: 'MZ123',
        media: { track: 'inbound', chunk: '1', timestamp: '20', payload },
      }),
      false,
    );
    expect(media).toMatchObject({ event: 'media', timestampMs: 20, track: 'inbound' });
    expect((media as { pcm: Buffer }).pcm.length).toBe(320);
    expect(
      parseTwilioMessage(
        '{"event":"dtmf","streamSid":"MZ123","sequenceNumber":"5","dtmf":{"track":"inbound_track","digit":"1"}}',
        false,
      ),
    ).toEqual({ event: 'dtmf', digit: '1' });
    expect(
      parseTwilioMessage('{"event":"mark","streamSid":"MZ123","sequenceNumber":"6","mark":{"name":"m1"}}', false),
    ).toEqual({ event: 'mark', name: 'm1' });
    expect(
      parseTwilioMessage(
        '{"event":"stop","sequenceNumber":"7","streamSid":"MZ123","stop":{"accountSid":"AC1","callSid":"CA1"}}',
        false,
      ),
    ).toEqual({ event: 'stop', callSid: 'CA1' });
  });

  it('rejects binary frames, bad JSON and wrong shapes as protocol errors', () => {
    expect(kindOf(() => parseTwilioMessage(Buffer.from([1, 2, 3]), true))).toBe('binary_frame');
    expect(kindOf(() => parseTwilioMessage('{"event":', false))).toBe('malformed_json');
    expect(kindOf(() => parseTwilioMessage('{"event":"media","sequenceNumber":3}', false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage('[]', false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage('null', false))).toBe('invalid_message');
  });

  it('accepts and rejects media frames exactly as the schema does (the per-frame path checks them by hand)', () => {
    const media = (m: Record<string, unknown>, top: Record<string, unknown> = {}) =>
      JSON.stringify({
        event: 'media',
        sequenceNumber: '3',
        streamSid: 'MZ123',
        media: { track: 'inbound', chunk: '1', timestamp: '20', payload: '//8=', ...m },
        ...top,
      });
    const ok = parseTwilioMessage(media({}, { extra: 1 }), false);
    expect(ok).toEqual({ event: 'media', pcm: Buffer.alloc(4), timestampMs: 20, track: 'inbound' });
    expect(kindOf(() => parseTwilioMessage(media({ payload: 'not base64!' }), false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage(media({ timestamp: '2.5' }), false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage(media({ chunk: 1 }), false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage(media({ track: undefined }), false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage(media({}, { sequenceNumber: '-1' }), false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage(media({}, { streamSid: null }), false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage(media({}, { media: [] }), false))).toBe('invalid_message');
    expect(kindOf(() => parseTwilioMessage(media({}, { media: 'x' }), false))).toBe('invalid_message');
  });

  it('builds the outbound messages exactly', () => {
    const pcm = Buffer.alloc(4); // two zero samples → 0xff 0xff
    expect(mediaMessage('MZ1', pcm)).toBe('{"event":"media","streamSid":"MZ1","media":{"payload":"//8="}}');
    expect(markMessage('MZ1', 'a1')).toBe('{"event":"mark","streamSid":"MZ1","mark":{"name":"a1"}}');
    expect(clearMessage('MZ1')).toBe('{"event":"clear","streamSid":"MZ1"}');
  });

  it('enforces the order connected → start → media… → stop', () => {
    const f = new TwilioFlow();
    expect(kindOf(() => f.check('media'))).toBe('out_of_order');
    const g = new TwilioFlow();
    g.check('connected');
    g.check('start');
    g.check('media');
    g.check('mark');
    expect(kindOf(() => g.check('start'))).toBe('out_of_order');
    g.check('stop');
    expect(kindOf(() => g.check('media'))).toBe('out_of_order');
  });
});

import { describe, expect, it } from 'vitest';
import { signV4 } from '../../../shared/engines/tts/vendors/sigv4.ts';
import { parsePollyKey } from '../../../shared/engines/tts/vendors/polly.ts';

describe('AWS Signature Version 4', () => {
  it('matches the get-vanilla vector of the AWS SigV4 test suite', async () => {
    const h = await signV4({
      method: 'GET',
      url: 'https://example.amazonaws.com/',
      headers: {},
      body: '',
      region: 'us-east-1',
      service: 'service',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
      date: new Date('2015-08-30T12:36:00Z'),
    });
    expect(h['x-amz-date']).toBe('20150830T123600Z');
    expect(h.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });

  it('signs a session token and sorted query parameters', async () => {
    const h = await signV4({
      method: 'POST',
      url: 'https://polly.us-east-1.amazonaws.com/v1/speech?b=2&a=1',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
      region: 'us-east-1',
      service: 'polly',
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'token' },
      date: new Date('2024-01-02T03:04:05Z'),
    });
    expect(h['x-amz-security-token']).toBe('token');
    expect(h.authorization).toContain('SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,');
  });

  it('reads polly keys as ACCESS_KEY_ID:SECRET[:REGION[:SESSION_TOKEN]]', () => {
    expect(parsePollyKey('AKID:sec/ret')).toEqual({ credentials: { accessKeyId: 'AKID', secretAccessKey: 'sec/ret' } });
    expect(parsePollyKey('AKID:secret:eu-west-1:tok')).toEqual({
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'tok' },
      region: 'eu-west-1',
    });
    expect(parsePollyKey('just-a-key')).toBeNull();
  });
});

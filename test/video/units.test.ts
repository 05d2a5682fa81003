import { describe, expect, it } from 'vitest';
import { visemesFromPcm } from '../../shared/engines/face/visemes.ts';
import { blinkAt } from '../../shared/engines/face/warp.ts';
import { wrapText } from '../../shared/engines/videogen/title-card.ts';
import { AddressPolicy } from '../../shared/kernel/net/address-policy.ts';
import { checkInput } from '../../shared/domains/video/inputs.ts';
import type { MediaInfo } from '../../shared/kernel/media/probe.ts';
import { precheckUrl } from '../../shared/domains/video/url-check.ts';
import { delayBeforeAttempt, MAX_ATTEMPTS } from '../../shared/domains/webhooks/schedule.ts';

const limits = { maxBytes: 1000, maxSeconds: 60, maxPixels: 1920 * 1080 };
const video = (w: number, h: number, seconds: number): MediaInfo => ({
  format: 'mov,mp4',
  durationSeconds: seconds,
  video: { width: w, height: h, fps: 25, codec: 'h264' },
  audio: { sampleRate: 44100, channels: 2, codec: 'aac' },
});

describe('input limits', () => {
  it('refuses over-long and over-sized inputs with input_too_large, and wrong kinds with input_unreadable', () => {
    expect(() => checkInput(video(1280, 720, 30), 'video', 'video_url', limits)).not.toThrow();
    expect(() => checkInput(video(1280, 720, 61), 'video', 'video_url', limits)).toThrow(
      expect.objectContaining({ code: 'input_too_large', message: expect.stringMatching(/61 s; the limit is 60 s/) }),
    );
    expect(() => checkInput(video(3840, 2160, 10), 'video', 'video_url', limits)).toThrow(
      expect.objectContaining({ code: 'input_too_large', message: expect.stringMatching(/3840×2160/) }),
    );
    expect(() => checkInput({ ...video(640, 480, 1), video: null }, 'video', 'video_url', limits)).toThrow(
      expect.objectContaining({ code: 'input_unreadable' }),
    );
    expect(() => checkInput(video(640, 480, 0), 'image', 'image_url', limits)).toThrow(
      expect.objectContaining({ code: 'input_unreadable', message: expect.stringMatching(/JPG or PNG/) }),
    );
  });
});

describe('submission URL check', () => {
  const policy = new AddressPolicy([]);
  it('refuses private, loopback and link-local literals and non-http schemes', async () => {
    for (const u of ['http://10.1.2.3/x', 'http://127.0.0.1/', 'http://169.254.169.254/latest', 'http://[::1]/']) {
      await expect(precheckUrl(u, policy, 'video_url')).rejects.toMatchObject({ code: 'url_not_allowed' });
    }
    await expect(precheckUrl('ftp://example.com/x', policy, 'video_url')).rejects.toMatchObject({
      code: 'invalid_url',
    });
    await expect(precheckUrl('http://user:pw@example.com/', policy, 'video_url')).rejects.toMatchObject({
      code: 'invalid_url',
    });
  });
  it('lets an allowlisted host through', async () => {
    await expect(
      precheckUrl('http://127.0.0.1:9/x', new AddressPolicy(['127.0.0.1']), 'video_url'),
    ).resolves.toBeUndefined();
  });
});

describe('webhook retry schedule', () => {
  it('follows the Standard Webhooks schedule, ten attempts in all', () => {
    expect(MAX_ATTEMPTS).toBe(10);
    expect([2, 3, 4, 5, 10].map((a) => delayBeforeAttempt(a))).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 86_400_000,
    ]);
    expect(delayBeforeAttempt(11)).toBeNull();
    expect(delayBeforeAttempt(2, 0.001)).toBe(5);
  });
});

describe('engine helpers', () => {
  it('opens the mouth on loud frames and keeps it closed on silence', () => {
    const pcm = new Int16Array(16_000);
    for (let i = 8000; i < 16_000; i++) pcm[i] = Math.round(12_000 * Math.sin((i / 16_000) * 2 * Math.PI * 180));
    const frames = visemesFromPcm(pcm, 25);
    expect(frames).toHaveLength(25);
    expect(frames[5]!.open).toBeLessThan(0.05);
    expect(frames[20]!.open).toBeGreaterThan(0.6);
  });
  it('blinks every few seconds, briefly', () => {
    const fps = 25;
    const closed = Array.from({ length: 10 * fps }, (_, f) => blinkAt(f, fps) > 0.5).filter(Boolean).length;
    expect(closed).toBeGreaterThan(2);
    expect(closed).toBeLessThan(20);
  });
  it('wraps a prompt into lines and ellipsises what does not fit', () => {
    expect(wrapText('a lighthouse at dusk over the sea', 12, 5)).toEqual(['a lighthouse', 'at dusk over', 'the sea']);
    const lines = wrapText('one two three four five six seven eight', 9, 2);
    expect(lines).toHaveLength(2);
    expect(lines[1]!.endsWith('…')).toBe(true);
  });
});

/*
 * A long-lived RHVoice synthesis worker, speaking flite-server's protocol (flite-server.c) so the same pool
 * (flite-pool.ts) drives it: the library and its voice data load once, not once per sentence as RHVoice-test would.
 *
 * Protocol: worker-protocol.h; the pitch field is RHVoice's relative pitch (0 = the voice's own).
 * Only the LGPL-2.1+ English voices are spoken (alan, bdl, clb, slt); any other name is an error even when its data
 * is installed (the English package also carries voices licensed for non-commercial use only).
 * One request at a time; EOF on stdin ends the process. Built by scripts/setup.d/45-rhvoice.sh when RHVOICE=1.
 */
#include <RHVoice.h>
#include <stdlib.h>

#include "../worker-protocol.h"

static const char *const lgpl_voices[][2] = {{"alan", "Alan"}, {"bdl", "BDL"}, {"clb", "CLB"}, {"slt", "SLT"}};

static struct {
  unsigned char *data;
  size_t len, cap;
  int rate;
  int failed;
} out;

static int set_sample_rate(int rate, void *user) {
  (void)user;
  out.rate = rate;
  return 1;
}

static int play_speech(const short *samples, unsigned int count, void *user) {
  (void)user;
  size_t bytes = (size_t)count * 2;
  if (out.len + bytes > out.cap) {
    size_t cap = out.cap ? out.cap : 1 << 16;
    while (cap < out.len + bytes) cap *= 2;
    unsigned char *d = realloc(out.data, cap);
    if (!d) {
      out.failed = 1;
      return 0;
    }
    out.data = d;
    out.cap = cap;
  }
  memcpy(out.data + out.len, samples, bytes);
  out.len += bytes;
  return 1;
}

static const char *profile_of(const char *voice) {
  for (size_t i = 0; i < sizeof lgpl_voices / sizeof lgpl_voices[0]; i++)
    if (strcmp(lgpl_voices[i][0], voice) == 0) return lgpl_voices[i][1];
  return NULL;
}

static RHVoice_tts_engine engine;

static void handle(char *fields[4]) {
  const char *profile = profile_of(fields[0]);
  if (!profile) {
    reply_error("unknown voice");
    return;
  }
  double stretch = atof(fields[1]);
  double pitch = atof(fields[2]);
  RHVoice_synth_params params;
  memset(&params, 0, sizeof params);
  params.voice_profile = profile;
  params.relative_rate = stretch > 0 ? 1.0 / stretch : 1.0;
  params.relative_pitch = pitch > 0 ? pitch : 1.0;
  params.relative_volume = 1.0;
  params.punctuation_mode = RHVoice_punctuation_default;
  params.capitals_mode = RHVoice_capitals_default;
  params.flags = RHVoice_synth_flag_dont_clip_rate;
  out.len = 0;
  out.failed = 0;
  RHVoice_message msg =
      RHVoice_new_message(engine, fields[3], (unsigned int)strlen(fields[3]), RHVoice_message_text, &params, NULL);
  if (!msg) {
    reply_error("synthesis failed: the text was refused");
    return;
  }
  int ok = RHVoice_speak(msg);
  RHVoice_delete_message(msg);
  if (!ok || out.failed) {
    reply_error("synthesis failed");
    return;
  }
  reply_pcm((uint32_t)out.rate, out.data, (uint32_t)out.len);
}

int main(int argc, char **argv) {
  /* argv[1]: RHVoice's data directory (tests and unusual installs); the packaged one by default. */
  RHVoice_init_params init;
  memset(&init, 0, sizeof init);
  init.data_path = argc > 1 ? argv[1] : "/usr/share/RHVoice";
  init.config_path = "/etc/RHVoice";
  init.callbacks.set_sample_rate = set_sample_rate;
  init.callbacks.play_speech = play_speech;
  engine = RHVoice_new_tts_engine(&init);
  if (!engine) return 3;
  return serve_requests(handle);
}

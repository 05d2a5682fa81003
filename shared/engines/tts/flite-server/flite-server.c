/*
 * A long-lived flite synthesis worker: the realtime TTS sends it requests on stdin instead of starting a flite
 * process per sentence (process creation costs a large share of kernel CPU on some VMs).
 *
 * Protocol: worker-protocol.h; the pitch field is flite's f0_shift (0 = the voice's default).
 * One request at a time; EOF on stdin ends the process. Built by scripts/setup.d/40-flite-server.sh.
 */
#include <flite/flite.h>
#include <stdlib.h>

#include "../worker-protocol.h"

cst_voice *register_cmu_us_kal16(const char *voxdir);
cst_voice *register_cmu_us_slt(const char *voxdir);
cst_voice *register_cmu_us_rms(const char *voxdir);
cst_voice *register_cmu_us_awb(const char *voxdir);

static struct {
  const char *name;
  cst_voice *(*reg)(const char *);
  cst_voice *voice;
} voices[] = {
    {"kal16", register_cmu_us_kal16, NULL},
    {"slt", register_cmu_us_slt, NULL},
    {"rms", register_cmu_us_rms, NULL},
    {"awb", register_cmu_us_awb, NULL},
};

/* Voices load on first use: a worker that only speaks kal16 never pays for the clustergen voices. */
static cst_voice *voice_named(const char *name) {
  for (size_t i = 0; i < sizeof voices / sizeof voices[0]; i++) {
    if (strcmp(voices[i].name, name) != 0) continue;
    if (!voices[i].voice) voices[i].voice = voices[i].reg(NULL);
    return voices[i].voice;
  }
  return NULL;
}

static void handle(char *fields[4]) {
  cst_voice *v = voice_named(fields[0]);
  if (!v) {
    reply_error("unknown voice");
    return;
  }
  feat_set_float(v->features, "duration_stretch", (float)atof(fields[1]));
  float f0 = (float)atof(fields[2]);
  if (f0 > 0)
    feat_set_float(v->features, "f0_shift", f0);
  else if (feat_present(v->features, "f0_shift"))
    feat_remove(v->features, "f0_shift");
  cst_wave *w = flite_text_to_wave(fields[3], v);
  if (!w) {
    reply_error("synthesis failed");
    return;
  }
  reply_pcm((uint32_t)cst_wave_sample_rate(w), cst_wave_samples(w), (uint32_t)cst_wave_num_samples(w) * 2);
  delete_wave(w);
}

int main(void) {
  flite_init();
  return serve_requests(handle);
}

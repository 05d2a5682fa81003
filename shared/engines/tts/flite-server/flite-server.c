/*
 * A long-lived flite synthesis worker: the realtime TTS sends it requests on stdin instead of starting a flite
 * process per sentence (process creation costs a large share of kernel CPU on some VMs).
 *
 * Request (stdin):  u32 LE length, then `voice \t duration_stretch \t f0_shift \t text` (f0_shift 0 = voice default)
 * Reply   (stdout): i32 LE status (0 ok, 1 error), u32 LE sample rate, u32 LE byte count, then that many bytes:
 *                   mono s16le PCM when ok, an error message otherwise.
 * One request at a time; EOF on stdin ends the process. Built by scripts/setup.d/40-flite-server.sh.
 */
#include <flite/flite.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cst_voice *register_cmu_us_kal16(const char *voxdir);
cst_voice *register_cmu_us_slt(const char *voxdir);
cst_voice *register_cmu_us_rms(const char *voxdir);
cst_voice *register_cmu_us_awb(const char *voxdir);

#define MAX_REQUEST (1 << 20)

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

static int read_full(void *buf, size_t n) {
  return fread(buf, 1, n, stdin) == n;
}

static void write_u32(uint32_t v) {
  unsigned char b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
  fwrite(b, 1, 4, stdout);
}

static void reply_error(const char *msg) {
  write_u32(1);
  write_u32(0);
  write_u32((uint32_t)strlen(msg));
  fwrite(msg, 1, strlen(msg), stdout);
  fflush(stdout);
}

int main(void) {
  flite_init();
  char *req = malloc(MAX_REQUEST + 1);
  if (!req) return 1;
  for (;;) {
    unsigned char lb[4];
    if (!read_full(lb, 4)) return 0; /* EOF: the pool closed us */
    uint32_t len = lb[0] | (lb[1] << 8) | (lb[2] << 16) | ((uint32_t)lb[3] << 24);
    if (len > MAX_REQUEST) return 2;
    if (!read_full(req, len)) return 0;
    req[len] = 0;
    char *fields[4];
    char *p = req;
    int n = 0;
    for (; n < 3; n++) {
      char *tab = strchr(p, '\t');
      if (!tab) break;
      *tab = 0;
      fields[n] = p;
      p = tab + 1;
    }
    if (n < 3) {
      reply_error("malformed request");
      continue;
    }
    fields[3] = p;
    cst_voice *v = voice_named(fields[0]);
    if (!v) {
      reply_error("unknown voice");
      continue;
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
      continue;
    }
    uint32_t bytes = (uint32_t)cst_wave_num_samples(w) * 2;
    write_u32(0);
    write_u32((uint32_t)cst_wave_sample_rate(w));
    write_u32(bytes);
    fwrite(cst_wave_samples(w), 1, bytes, stdout); /* s16 host order: little-endian on every target we build */
    fflush(stdout);
    delete_wave(w);
  }
}

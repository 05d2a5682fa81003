/*
 * ps-stream: a long-lived streaming pocketsphinx worker. The local live STT (shared/engines/stt/pocketsphinx-live.ts)
 * keeps a few of these; each one hosts many calls ("channels") and a small pool of decoders. Loading a decoder
 * costs tens of MB and a few hundred ms, so a channel holds one only while its caller speaks: an energy gate per
 * channel (10 ms frames) finds speech, takes a decoder from the pool (made on demand, kept for reuse), feeds it the
 * pre-roll and then every frame as it arrives, reports partial hypotheses as they change, and after `hangover` ms
 * of silence ends the utterance, reports the final and gives the decoder back. A channel's cepstral mean is carried
 * from one of its utterances to the next (another call used the decoder in between).
 *
 * Usage: ps-stream --lm <general LM> --dict <dictionary> [--hangover-ms N] [--preroll-ms N] [--partial-ms N]
 *                  [--keep-idle N] [--max-utt-ms N] [--progress-ms N] -- <pocketsphinx arguments: -hmm, beams…>
 * Input 16 kHz s16le mono. Messages both ways: u8 op, u32 LE channel, u32 LE length, then `length` bytes.
 *   in   'O' open channel; payload "<line kind>" (the default -lm/-dict) or "<line kind>\t<lm>\t<dict>" (a
 *            request's language model); the line kind (the caller's sample rate) picks the prior cepstral mean
 *        'A' audio (s16le, even length)   'E' end of audio: flush the open utterance, then answer 'D'
 *        'C' close (forget the channel; no answer)
 *   out  'P' partial: text     'F' final: "<start ms>\t<end ms>\t<text>" (ms of the channel's audio)
 *        'D' ended (after 'E')  'X' the channel failed: a message (e.g. its language model would not load)
 *        'G' progress: "<decoded ms>\t<settled ms>", at the end of an 'A' message once `progress_ms` more of the
 *            channel's audio has been decoded since the last one (0: never). Decoded: how far through the channel's
 *            audio the decoder is. Settled: every final of speech before it has been sent (the decoded time, less a
 *            voiced run that may be opening an utterance; in an utterance, where its speech began; never falling).
 *            A consumer waiting for a final knows from it
 *            that none is coming (settled past the speech) or that the decoder is still working toward it (on a
 *            starved CPU the decoder falls seconds behind the audio; the input waits in the pipe meanwhile).
 * EOF on stdin ends the process. Built by scripts/setup.d/41-ps-stream.sh.
 */
#include <math.h>
#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE 16000
#define FRAME 160 /* 10 ms */
#define MAX_MSG (1 << 20)
#define MAX_TEXT 4096
#define CEPLEN 13
#define CALIBRATION_WEIGHT 10
#define CALIBRATION_MS 500

static int hangover_ms = 200, preroll_ms = 300, partial_ms = 160, keep_idle = 4, max_utt_ms = 20000, progress_ms = 100;
static int base_argc;
static char **base_argv;

/* ---- decoders, pooled per language model ---- */
typedef struct decoder {
  ps_decoder_t *ps;
  char *key; /* "" or "<lm>\t<dict>" */
  struct decoder *next;
} decoder_t;
static decoder_t *idle_list;
static int idle_count;

/*
 * The language models loaded so far, one per key, shared by every decoder of that key: the general model is about
 * half of a decoder's 100 MB, and a decoder only reads it. Kept for the life of the process (a few per process).
 */
typedef struct shared_lm {
  char *key;
  ngram_model_t *lm;
  struct shared_lm *next;
} shared_lm_t;
static shared_lm_t *lms;
static const char *default_lm, *default_dict;

#define SEARCH "lm"

static decoder_t *decoder_take(const char *key, char *err, size_t errlen) {
  for (decoder_t **p = &idle_list; *p; p = &(*p)->next) {
    if (strcmp((*p)->key, key) == 0) {
      decoder_t *d = *p;
      *p = d->next;
      idle_count--;
      return d;
    }
  }
  shared_lm_t *shared = NULL;
  for (shared_lm_t *l = lms; l; l = l->next)
    if (strcmp(l->key, key) == 0) shared = l;
  char *copy = strdup(key), *tab = strchr(copy, '\t');
  const char *lm = default_lm, *dict = default_dict;
  if (tab) {
    *tab = 0;
    lm = copy;
    dict = tab + 1;
  }
  char *argv[72];
  int argc = 0;
  for (int i = 0; i < base_argc && argc < 64; i++) argv[argc++] = base_argv[i];
  argv[argc++] = "-dict";
  argv[argc++] = (char *)dict;
  /* The first decoder of a key loads its language model; the others are made without one and given it. */
  if (!shared) {
    argv[argc++] = "-lm";
    argv[argc++] = (char *)lm;
  }
  cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), argc, argv, FALSE);
  ps_decoder_t *ps = config ? ps_init(config) : NULL;
  if (config) cmd_ln_free_r(config);
  free(copy);
  if (ps && !shared) {
    ngram_model_t *model = ps_get_lm(ps, ps_get_search(ps));
    if (model) {
      shared = calloc(1, sizeof *shared);
      shared->key = strdup(key);
      shared->lm = ngram_model_retain(model);
      shared->next = lms;
      lms = shared;
    }
  } else if (ps) {
    /* Our own reference for the search, whether or not the search takes one: the shared model is never freed. */
    if (ps_set_lm(ps, SEARCH, ngram_model_retain(shared->lm)) < 0 || ps_set_search(ps, SEARCH) < 0) {
      ps_free(ps);
      ps = NULL;
    }
  }
  if (!ps) {
    snprintf(err, errlen, "pocketsphinx could not load its model%s", tab ? " (the request's language model)" : "");
    return NULL;
  }
  decoder_t *d = calloc(1, sizeof *d);
  d->ps = ps;
  d->key = strdup(key);
  return d;
}

static void decoder_give(decoder_t *d) {
  if (idle_count >= keep_idle) {
    /* Over the idle cap: the oldest idle decoder goes (the list's tail), this one is kept (most likely reused). */
    decoder_t **p = &idle_list;
    while (*p && (*p)->next) p = &(*p)->next;
    if (*p) {
      ps_free((*p)->ps);
      free((*p)->key);
      free(*p);
      *p = NULL;
      idle_count--;
    }
    if (keep_idle <= 0) {
      ps_free(d->ps);
      free(d->key);
      free(d);
      return;
    }
  }
  d->next = idle_list;
  idle_list = d;
  idle_count++;
}

/* ---- channels ---- */
typedef struct channel {
  uint32_t id;
  char *key;
  decoder_t *dec;
  int16_t *ring; /* the last preroll_ms of audio, for the onset */
  int ring_len, ring_pos, ring_fill;
  int16_t frame[FRAME];
  int frame_fill;
  int64_t samples;      /* audio received (samples) */
  int64_t utt_start;    /* sample where the utterance's audio starts (its pre-roll included) */
  int64_t utt_voiced;   /* sample where its speech starts (the voiced run that opened it) */
  int64_t last_voiced;  /* sample where the last voiced frame ends */
  int voiced_run;       /* consecutive voiced frames before an onset */
  int silent_ms, since_partial_ms, utt_ms;
  double noise;         /* running noise floor (RMS) */
  char partial[MAX_TEXT];
  char *audio_class;    /* what kind of line (the caller's sample rate): calls of one kind share a prior mean */
  mfcc_t cmn[CEPLEN];
  int has_cmn;
  int16_t *utt_audio;   /* calibrating: the utterance's audio, decoded again once its own mean is known */
  int utt_audio_len, utt_audio_cap;
  int failed; /* its decoder would not load: audio is ignored until it is closed */
  int64_t progress_at; /* samples decoded when the last progress was sent */
  struct channel *next;
} channel_t;
static channel_t *channels;

static channel_t *channel_find(uint32_t id) {
  for (channel_t *c = channels; c; c = c->next)
    if (c->id == id) return c;
  return NULL;
}

/*
 * Cepstral means. pocketsphinx normalises with a running mean that it updates only at the end of an utterance (or
 * every 8 s), starting from the model's, which is far from a phone line's: a call's first utterance on the model's
 * mean came out as "where upland" for "where is the clinic". So a channel starts from the mean of the last
 * utterance heard on a line of its kind in this process (its prior), then carries its own. With no prior yet (the
 * first call of its kind here), its first utterance starts again after CALIBRATION_MS with the mean of what it
 * heard so far (about 0.1 s of decoding, once).
 */
typedef struct prior {
  char *audio_class;
  mfcc_t cmn[CEPLEN];
  struct prior *next;
} prior_t;
static prior_t *priors;

static prior_t *prior_for(const char *audio_class) {
  for (prior_t *p = priors; p; p = p->next)
    if (strcmp(p->audio_class, audio_class) == 0) return p;
  return NULL;
}

static cmn_t *cmn_of(ps_decoder_t *ps) {
  feat_t *feat = ps_get_feat(ps);
  return feat && feat->cmn_struct && feat->cmn_struct->veclen == CEPLEN ? feat->cmn_struct : NULL;
}

/* ---- output ---- */
static void put_u32(unsigned char *b, uint32_t v) {
  b[0] = v & 0xff, b[1] = (v >> 8) & 0xff, b[2] = (v >> 16) & 0xff, b[3] = (v >> 24) & 0xff;
}
static void send_msg(char op, uint32_t id, const char *body, size_t len) {
  unsigned char h[9];
  h[0] = (unsigned char)op;
  put_u32(h + 1, id);
  put_u32(h + 5, (uint32_t)len);
  fwrite(h, 1, 9, stdout);
  if (len) fwrite(body, 1, len, stdout);
  fflush(stdout);
}

/* The hypothesis without fillers and pronunciation variants ("read(2)"). */
static void clean_hyp(const char *hyp, char *out, size_t cap) {
  size_t n = 0;
  out[0] = 0;
  if (!hyp) return;
  const char *p = hyp;
  while (*p) {
    while (*p == ' ') p++;
    const char *s = p;
    while (*p && *p != ' ') p++;
    size_t w = (size_t)(p - s);
    if (w == 0) break;
    if (s[0] == '<' || s[0] == '[' || s[0] == '+') continue;
    size_t keep = w;
    if (s[w - 1] == ')') {
      const char *o = memchr(s, '(', w);
      if (o) keep = (size_t)(o - s);
    }
    if (n + keep + 2 >= cap) break;
    if (n) out[n++] = ' ';
    memcpy(out + n, s, keep);
    n += keep;
    out[n] = 0;
  }
}

static void fail_channel(channel_t *c, const char *why) {
  send_msg('X', c->id, why, strlen(why));
}

/* ---- utterances ---- */
/* Audio into the channel's decoder (and, while calibrating, into the utterance's copy). */
static void feed(channel_t *c, const int16_t *s, int n) {
  ps_process_raw(c->dec->ps, s, (size_t)n, FALSE, FALSE);
  if (c->utt_audio_cap && c->utt_audio_len + n <= c->utt_audio_cap) {
    memcpy(c->utt_audio + c->utt_audio_len, s, sizeof(int16_t) * (size_t)n);
    c->utt_audio_len += n;
  }
}

static int utt_begin(channel_t *c) {
  char err[256];
  c->dec = decoder_take(c->key, err, sizeof err);
  if (!c->dec) {
    c->failed = 1;
    fail_channel(c, err);
    return 0;
  }
  cmn_t *cmn = cmn_of(c->dec->ps);
  prior_t *prior = c->has_cmn ? NULL : prior_for(c->audio_class);
  if (cmn && c->has_cmn) cmn_live_set(cmn, c->cmn);
  else if (cmn && prior) cmn_live_set(cmn, prior->cmn);
  c->utt_audio_len = 0;
  c->utt_audio_cap = cmn && !c->has_cmn && !prior ? RATE / 1000 * (CALIBRATION_MS + 20) + c->ring_len : 0;
  if (c->utt_audio_cap) {
    if (!c->utt_audio) c->utt_audio = malloc(sizeof(int16_t) * (size_t)c->utt_audio_cap);
    /* The mean recalibrate() finds is then nearly the utterance's own: the current one weighs 10 frames, not 500. */
    for (int i = 0; i < CEPLEN; i++) cmn->sum[i] = cmn->cmn_mean[i] * CALIBRATION_WEIGHT;
    cmn->nframe = CALIBRATION_WEIGHT;
  }
  ps_start_utt(c->dec->ps);
  c->partial[0] = 0;
  c->since_partial_ms = 0;
  c->utt_ms = 0;
  c->silent_ms = 0;
  /* The pre-roll, oldest first. */
  int start = (c->ring_pos - c->ring_fill + c->ring_len) % c->ring_len;
  int first = c->ring_fill < c->ring_len - start ? c->ring_fill : c->ring_len - start;
  if (first > 0) feed(c, c->ring + start, first);
  if (c->ring_fill > first) feed(c, c->ring, c->ring_fill - first);
  c->utt_start = c->samples - c->ring_fill;
  c->utt_voiced = c->samples - 3 * FRAME;
  c->ring_fill = 0;
  return 1;
}

/*
 * Calibrating: the first CALIBRATION_MS of the utterance have been heard; ending it updates the mean from them
 * (nearly their own mean: see utt_begin), and the utterance starts again from its beginning with that mean.
 */
static void recalibrate(channel_t *c) {
  ps_decoder_t *ps = c->dec->ps;
  ps_end_utt(ps);
  ps_start_utt(ps);
  ps_process_raw(ps, c->utt_audio, (size_t)c->utt_audio_len, FALSE, FALSE);
  c->utt_audio_cap = 0;
  c->partial[0] = 0;
}

static void utt_finish(channel_t *c) {
  ps_decoder_t *ps = c->dec->ps;
  if (c->utt_audio_cap) recalibrate(c); /* an utterance shorter than the calibration */
  ps_end_utt(ps);
  cmn_t *cmn = cmn_of(ps);
  char text[MAX_TEXT], body[MAX_TEXT + 64];
  clean_hyp(ps_get_hyp(ps, NULL), text, sizeof text);
  if (cmn) {
    memcpy(c->cmn, cmn->cmn_mean, sizeof c->cmn);
    c->has_cmn = 1;
    prior_t *prior = prior_for(c->audio_class);
    if (!prior) {
      prior = calloc(1, sizeof *prior);
      prior->audio_class = strdup(c->audio_class);
      prior->next = priors;
      priors = prior;
    }
    memcpy(prior->cmn, c->cmn, sizeof c->cmn);
  }
  decoder_give(c->dec);
  c->dec = NULL;
  if (text[0]) {
    int len = snprintf(body, sizeof body, "%lld\t%lld\t%s", (long long)(c->utt_start * 1000 / RATE),
                       (long long)(c->last_voiced * 1000 / RATE), text);
    send_msg('F', c->id, body, (size_t)len);
  }
  c->partial[0] = 0;
}

static double frame_rms(const int16_t *s) {
  double sum = 0;
  for (int i = 0; i < FRAME; i++) sum += (double)s[i] * s[i];
  return sqrt(sum / FRAME);
}

/* One 10 ms frame through the gate and, in an utterance, the decoder. */
static void on_frame(channel_t *c) {
  const int16_t *s = c->frame;
  double rms = frame_rms(s);
  /* Speech is well above the line's noise floor and above a floor of its own (digital silence has no noise). */
  double threshold = fmax(150.0, c->noise * 3.5);
  int voiced = rms >= threshold;
  if (!voiced && !c->dec) c->noise = c->noise == 0 ? rms : 0.95 * c->noise + 0.05 * rms;
  c->samples += FRAME;
  if (!c->dec) {
    /* Between utterances: remember the audio, start on 3 voiced frames in a row (30 ms: a click is not speech). */
    for (int i = 0; i < FRAME; i++) {
      c->ring[c->ring_pos] = s[i];
      c->ring_pos = (c->ring_pos + 1) % c->ring_len;
    }
    c->ring_fill = c->ring_fill + FRAME > c->ring_len ? c->ring_len : c->ring_fill + FRAME;
    c->voiced_run = voiced ? c->voiced_run + 1 : 0;
    if (c->voiced_run >= 3) {
      c->voiced_run = 0;
      c->last_voiced = c->samples;
      utt_begin(c);
    }
    return;
  }
  feed(c, s, FRAME);
  c->utt_ms += 10;
  if (c->utt_audio_cap && c->utt_ms >= CALIBRATION_MS) recalibrate(c);
  c->since_partial_ms += 10;
  if (voiced) {
    c->silent_ms = 0;
    c->last_voiced = c->samples;
  } else {
    c->silent_ms += 10;
  }
  if (c->silent_ms >= hangover_ms || c->utt_ms >= max_utt_ms) {
    utt_finish(c);
    return;
  }
  if (c->since_partial_ms >= partial_ms && c->silent_ms == 0) {
    c->since_partial_ms = 0;
    char text[MAX_TEXT];
    clean_hyp(ps_get_hyp(c->dec->ps, NULL), text, sizeof text);
    if (text[0] && strcmp(text, c->partial) != 0) {
      strcpy(c->partial, text);
      send_msg('P', c->id, text, strlen(text));
    }
  }
}

static void on_audio(channel_t *c, const unsigned char *b, uint32_t len) {
  for (uint32_t i = 0; i + 1 < len; i += 2) {
    c->frame[c->frame_fill++] = (int16_t)(b[i] | (b[i + 1] << 8));
    if (c->frame_fill == FRAME) {
      c->frame_fill = 0;
      on_frame(c);
    }
  }
  /* Progress once per message at most, and only every progress_ms of audio: one small write more per 100 ms. */
  if (progress_ms > 0 && c->samples - c->progress_at >= (int64_t)RATE / 1000 * progress_ms) {
    c->progress_at = c->samples;
    int64_t settled = c->dec ? c->utt_voiced : c->samples - (int64_t)c->voiced_run * FRAME;
    char body[64];
    int n = snprintf(body, sizeof body, "%lld\t%lld", (long long)(c->samples * 1000 / RATE),
                     (long long)(settled * 1000 / RATE));
    send_msg('G', c->id, body, (size_t)n);
  }
}

static void channel_free(channel_t *c) {
  if (c->dec) {
    ps_end_utt(c->dec->ps);
    decoder_give(c->dec);
  }
  for (channel_t **p = &channels; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  free(c->ring);
  free(c->key);
  free(c->audio_class);
  free(c->utt_audio);
  free(c);
}

static int read_full(void *buf, size_t n) {
  return fread(buf, 1, n, stdin) == n;
}

int main(int argc, char **argv) {
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    if (i + 1 >= argc) return 64;
    int v = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--hangover-ms") == 0) hangover_ms = v;
    else if (strcmp(argv[i], "--preroll-ms") == 0) preroll_ms = v;
    else if (strcmp(argv[i], "--partial-ms") == 0) partial_ms = v;
    else if (strcmp(argv[i], "--keep-idle") == 0) keep_idle = v;
    else if (strcmp(argv[i], "--max-utt-ms") == 0) max_utt_ms = v;
    else if (strcmp(argv[i], "--progress-ms") == 0) progress_ms = v;
    else if (strcmp(argv[i], "--lm") == 0) default_lm = argv[i + 1];
    else if (strcmp(argv[i], "--dict") == 0) default_dict = argv[i + 1];
    else return 64;
    i++;
  }
  if (!default_lm || !default_dict) return 64;
  base_argc = argc - i;
  base_argv = argv + i;
  err_set_logfp(NULL);
  unsigned char *msg = malloc(MAX_MSG + 1);
  if (!msg) return 1;
  for (;;) {
    unsigned char h[9];
    if (!read_full(h, 9)) return 0; /* EOF: the pool closed us */
    char op = (char)h[0];
    uint32_t id = h[1] | (h[2] << 8) | (h[3] << 16) | ((uint32_t)h[4] << 24);
    uint32_t len = h[5] | (h[6] << 8) | (h[7] << 16) | ((uint32_t)h[8] << 24);
    if (len > MAX_MSG) return 2;
    if (len && !read_full(msg, len)) return 0;
    msg[len] = 0;
    channel_t *c = channel_find(id);
    if (op == 'O') {
      if (c) channel_free(c);
      c = calloc(1, sizeof *c);
      c->id = id;
      char *tab = strchr((char *)msg, '\t');
      if (tab) *tab = 0;
      c->audio_class = strdup((char *)msg);
      c->key = strdup(tab ? tab + 1 : "");
      c->ring_len = RATE / 1000 * (preroll_ms > 10 ? preroll_ms : 10);
      c->ring = calloc((size_t)c->ring_len, sizeof(int16_t));
      c->next = channels;
      channels = c;
    } else if (!c) {
      continue; /* a channel closed already (or never opened): nothing to do */
    } else if (op == 'A') {
      if (!c->failed) on_audio(c, msg, len);
    } else if (op == 'E') {
      if (c->dec) utt_finish(c);
      send_msg('D', c->id, "", 0);
    } else if (op == 'C') {
      channel_free(c);
    }
  }
}

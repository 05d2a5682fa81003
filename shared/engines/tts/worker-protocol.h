/*
 * The request/reply framing shared by the long-lived synthesis workers (flite-server.c, rhvoice-server.c), which
 * flite-pool.ts drives:
 *
 * Request (stdin):  u32 LE length, then `voice \t duration_stretch \t pitch \t text`
 * Reply   (stdout): i32 LE status (0 ok, 1 error), u32 LE sample rate, u32 LE byte count, then that many bytes:
 *                   mono s16le PCM when ok, an error message otherwise.
 */
#ifndef VAP_WORKER_PROTOCOL_H
#define VAP_WORKER_PROTOCOL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQUEST (1 << 20)

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

/* s16 host order: little-endian on every target we build. */
static void reply_pcm(uint32_t rate, const void *pcm, uint32_t bytes) {
  write_u32(0);
  write_u32(rate);
  write_u32(bytes);
  fwrite(pcm, 1, bytes, stdout);
  fflush(stdout);
}

/*
 * Reads the next request into `req` (MAX_REQUEST + 1 bytes) and splits it into its four fields. Returns 1 for a
 * request, 0 at EOF (the pool closed us), -1 for an oversized one (the caller exits: the stream is lost), and 2 for
 * a malformed one, already answered.
 */
static int read_request(char *req, char *fields[4]) {
  unsigned char lb[4];
  if (!read_full(lb, 4)) return 0;
  uint32_t len = lb[0] | (lb[1] << 8) | (lb[2] << 16) | ((uint32_t)lb[3] << 24);
  if (len > MAX_REQUEST) return -1;
  if (!read_full(req, len)) return 0;
  req[len] = 0;
  char *p = req;
  for (int n = 0; n < 3; n++) {
    char *tab = strchr(p, '\t');
    if (!tab) {
      reply_error("malformed request");
      return 2;
    }
    *tab = 0;
    fields[n] = p;
    p = tab + 1;
  }
  fields[3] = p;
  return 1;
}

/*
 * Answers requests until EOF: `handle` gets each well-formed request's four fields and writes exactly one reply
 * (reply_pcm or reply_error). Returns main's exit status: 0 at EOF, 1 out of memory, 2 an oversized request.
 */
static int serve_requests(void (*handle)(char *fields[4])) {
  char *req = malloc(MAX_REQUEST + 1);
  if (!req) return 1;
  for (;;) {
    char *fields[4];
    int got = read_request(req, fields);
    if (got <= 0) return got == 0 ? 0 : 2;
    if (got == 1) handle(fields);
  }
}
#endif

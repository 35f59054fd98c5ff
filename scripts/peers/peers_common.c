/*
 * peers_common.c: the library-free helpers of the peer drivers; see
 * peers_common.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "peers_common.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* fail formats a message into err and returns -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

void peer_split(int64_t n, int size, int rank, int64_t *lo, int64_t *hi) {
  int64_t base = n / size, extra = n % size;
  *lo = rank * base + (rank < extra ? rank : extra);
  *hi = *lo + base + (rank < extra ? 1 : 0);
}

int peer_parse_poisson7(const char *spec, int64_t *N, char *err, size_t errlen) {
  const char *prefix = "poisson7:";
  size_t plen = strlen(prefix);
  char *end;
  long long v;

  if (strncmp(spec, prefix, plen) != 0)
    return fail(err, errlen, "problem %s: want poisson7:N", spec);
  errno = 0;
  v = strtoll(spec + plen, &end, 10);
  if (errno != 0 || end == spec + plen || *end != '\0' || v < 2)
    return fail(err, errlen, "problem %s: N must be an integer >= 2", spec);
  *N = v;
  return 0;
}

/* rows_alloc allocates the CSR arrays of r for nrows rows and nnz entries. */
static int rows_alloc(peer_rows *r, int64_t nrows, int64_t nnz, char *err, size_t errlen) {
  r->nrows = nrows;
  r->rowptr = malloc((size_t)(nrows + 1) * sizeof *r->rowptr);
  r->col = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *r->col);
  r->val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *r->val);
  if (!r->rowptr || !r->col || !r->val) {
    peer_rows_free(r);
    return fail(err, errlen, "out of memory for %" PRId64 " rows, %" PRId64 " entries", nrows, nnz);
  }
  r->rowptr[0] = 0;
  return 0;
}

int peer_poisson7(int64_t N, int64_t lo, int64_t hi, peer_rows *out, char *err, size_t errlen) {
  int64_t i, k = 0;

  memset(out, 0, sizeof *out);
  out->n = N * N * N;
  out->first = lo;
  if (rows_alloc(out, hi - lo, 7 * (hi - lo), err, errlen) != 0)
    return -1;
  for (i = lo; i < hi; i++) {
    int64_t x = i % N, y = (i / N) % N, z = i / (N * N);
    /* Neighbours in increasing column order: -z, -y, -x, self, +x, +y, +z. */
    if (z > 0) out->col[k] = i - N * N, out->val[k++] = -1;
    if (y > 0) out->col[k] = i - N, out->val[k++] = -1;
    if (x > 0) out->col[k] = i - 1, out->val[k++] = -1;
    out->col[k] = i, out->val[k++] = 6;
    if (x < N - 1) out->col[k] = i + 1, out->val[k++] = -1;
    if (y < N - 1) out->col[k] = i + N, out->val[k++] = -1;
    if (z < N - 1) out->col[k] = i + N * N, out->val[k++] = -1;
    out->rowptr[i - lo + 1] = k;
  }
  return 0;
}

/* triplet is one matrix entry (0-based) while reading. */
typedef struct {
  int64_t row, col;
  double val;
} triplet;

static int triplet_cmp(const void *a, const void *b) {
  const triplet *x = a, *y = b;
  if (x->row != y->row) return x->row < y->row ? -1 : 1;
  if (x->col != y->col) return x->col < y->col ? -1 : 1;
  return 0;
}

/* triplets is a growable array of entries. */
typedef struct {
  triplet *t;
  int64_t len, cap;
} triplets;

static int triplets_push(triplets *ts, int64_t row, int64_t col, double val) {
  if (ts->len == ts->cap) {
    int64_t cap = ts->cap ? 2 * ts->cap : 1024;
    triplet *t = realloc(ts->t, (size_t)cap * sizeof *t);
    if (!t) return -1;
    ts->t = t;
    ts->cap = cap;
  }
  ts->t[ts->len++] = (triplet){row, col, val};
  return 0;
}

/* rows_from_triplets sorts the local entries and compresses them into CSR for
 * rows [first, first+nrows), summing duplicates. */
static int rows_from_triplets(triplets *ts, int64_t n, int64_t first, int64_t nrows, peer_rows *out,
                              char *err, size_t errlen) {
  int64_t k, m = 0, row = 0;

  qsort(ts->t, (size_t)ts->len, sizeof *ts->t, triplet_cmp);
  memset(out, 0, sizeof *out);
  out->n = n;
  out->first = first;
  if (rows_alloc(out, nrows, ts->len, err, errlen) != 0)
    return -1;
  /* row is the row of the last stored entry; rowptr is final up to it. */
  for (k = 0; k < ts->len; k++) {
    const triplet *t = &ts->t[k];
    int64_t r = t->row - first;
    if (m > 0 && row == r && out->col[m - 1] == t->col) {
      out->val[m - 1] += t->val;
      continue;
    }
    for (; row < r; row++) out->rowptr[row + 1] = m;
    out->col[m] = t->col;
    out->val[m++] = t->val;
  }
  for (; row < nrows; row++) out->rowptr[row + 1] = m;
  return 0;
}

/* mm_header checks the banner of a Matrix Market file and says whether it is
 * symmetric. */
static int mm_header(const char *path, const char *line, int *symmetric, char *err, size_t errlen) {
  char banner[64], object[64], format[64], field[64], sym[64];

  if (sscanf(line, "%63s %63s %63s %63s %63s", banner, object, format, field, sym) != 5 ||
      strcmp(banner, "%%MatrixMarket") != 0)
    return fail(err, errlen, "%s: line 1: not a Matrix Market banner", path);
  if (strcasecmp(object, "matrix") != 0 || strcasecmp(format, "coordinate") != 0)
    return fail(err, errlen, "%s: line 1: want 'matrix coordinate', have '%s %s'", path, object, format);
  if (strcasecmp(field, "real") != 0 && strcasecmp(field, "integer") != 0)
    return fail(err, errlen, "%s: line 1: field %s not supported (want real or integer)", path, field);
  if (strcasecmp(sym, "symmetric") == 0)
    *symmetric = 1;
  else if (strcasecmp(sym, "general") == 0)
    *symmetric = 0;
  else
    return fail(err, errlen, "%s: line 1: symmetry %s not supported (want symmetric or general)", path, sym);
  return 0;
}

/* mm_entries reads the size line and the entries, keeping those of rows
 * [*lo, *hi) (and, for symmetric files, the mirrors that land there). */
static int mm_entries(FILE *f, const char *path, int symmetric, int size, int rank, triplets *ts,
                      int64_t *n, int64_t *lo, int64_t *hi, char *err, size_t errlen) {
  char *line = NULL;
  size_t cap = 0;
  int64_t lineno = 1, rows = -1, cols, nnz = 0, seen = 0;
  int rc = 0;

  while (getline(&line, &cap, f) >= 0) {
    long long i, j;
    double v;
    lineno++;
    if (line[0] == '%' || strspn(line, " \t\r\n") == strlen(line))
      continue;
    if (rows < 0) {
      long long r, c, z;
      if (sscanf(line, "%lld %lld %lld", &r, &c, &z) != 3 || r <= 0 || r != c || z < 0) {
        rc = fail(err, errlen, "%s: line %" PRId64 ": want a square size line 'n n nnz'", path, lineno);
        break;
      }
      rows = r, cols = c, nnz = z;
      peer_split(rows, size, rank, lo, hi);
      continue;
    }
    if (sscanf(line, "%lld %lld %lf", &i, &j, &v) != 3 || i < 1 || i > rows || j < 1 || j > cols) {
      rc = fail(err, errlen, "%s: line %" PRId64 ": bad entry", path, lineno);
      break;
    }
    seen++;
    i--, j--;
    if ((i >= *lo && i < *hi && triplets_push(ts, i, j, v) != 0) ||
        (symmetric && i != j && j >= *lo && j < *hi && triplets_push(ts, j, i, v) != 0)) {
      rc = fail(err, errlen, "%s: out of memory at line %" PRId64, path, lineno);
      break;
    }
  }
  free(line);
  if (rc != 0)
    return rc;
  if (ferror(f))
    return fail(err, errlen, "%s: read error: %s", path, strerror(errno));
  if (rows < 0)
    return fail(err, errlen, "%s: no size line", path);
  if (seen != nnz)
    return fail(err, errlen, "%s: %" PRId64 " entries, size line says %" PRId64, path, seen, nnz);
  *n = rows;
  return 0;
}

int peer_read_mm(const char *path, int size, int rank, peer_rows *out, char *err, size_t errlen) {
  FILE *f;
  char *line = NULL;
  size_t cap = 0;
  int symmetric = 0, rc;
  int64_t n = 0, lo = 0, hi = 0;
  triplets ts = {0};

  memset(out, 0, sizeof *out);
  if (!(f = fopen(path, "r")))
    return fail(err, errlen, "%s: %s", path, strerror(errno));
  if (getline(&line, &cap, f) < 0)
    rc = fail(err, errlen, "%s: empty file", path);
  else
    rc = mm_header(path, line, &symmetric, err, errlen);
  free(line);
  if (rc == 0)
    rc = mm_entries(f, path, symmetric, size, rank, &ts, &n, &lo, &hi, err, errlen);
  fclose(f);
  if (rc == 0)
    rc = rows_from_triplets(&ts, n, lo, hi - lo, out, err, errlen);
  free(ts.t);
  return rc;
}

int64_t peer_rows_nnz(const peer_rows *r) { return r->rowptr ? r->rowptr[r->nrows] : 0; }

void peer_rows_free(peer_rows *r) {
  free(r->rowptr);
  free(r->col);
  free(r->val);
  r->rowptr = NULL;
  r->col = NULL;
  r->val = NULL;
}

double peer_wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* json_put appends formatted text, remembering an overflow. */
static void json_put(peer_json *j, const char *fmt, ...) {
  va_list ap;
  int w;
  if (j->overflow) return;
  va_start(ap, fmt);
  w = vsnprintf(j->buf + j->len, sizeof j->buf - j->len, fmt, ap);
  va_end(ap);
  if (w < 0 || (size_t)w >= sizeof j->buf - j->len)
    j->overflow = 1;
  else
    j->len += (size_t)w;
}

static void json_key(peer_json *j, const char *key) {
  json_put(j, "%s\"%s\": ", j->fields++ ? ", " : "", key);
}

void peer_json_init(peer_json *j) {
  memset(j, 0, sizeof *j);
  json_put(j, "{");
}

void peer_json_str(peer_json *j, const char *key, const char *val) {
  const char *p;
  json_key(j, key);
  json_put(j, "\"");
  for (p = val; *p; p++) {
    if (*p == '"' || *p == '\\')
      json_put(j, "\\%c", *p);
    else if ((unsigned char)*p < 0x20)
      json_put(j, "\\u%04x", (unsigned)*p);
    else
      json_put(j, "%c", *p);
  }
  json_put(j, "\"");
}

void peer_json_int(peer_json *j, const char *key, int64_t val) {
  json_key(j, key);
  json_put(j, "%" PRId64, val);
}

void peer_json_num(peer_json *j, const char *key, double val) {
  json_key(j, key);
  if (isfinite(val))
    json_put(j, "%.10g", val);
  else
    json_put(j, "null");
}

void peer_json_null(peer_json *j, const char *key) {
  json_key(j, key);
  json_put(j, "null");
}

void peer_json_bool(peer_json *j, const char *key, int val) {
  json_key(j, key);
  json_put(j, val ? "true" : "false");
}

int peer_json_finish(peer_json *j, const char *path, char *err, size_t errlen) {
  FILE *f;
  json_put(j, "}\n");
  if (j->overflow)
    return fail(err, errlen, "json: result longer than %zu bytes", sizeof j->buf);
  fputs(j->buf, stdout);
  fflush(stdout);
  if (!path || !*path)
    return 0;
  if (!(f = fopen(path, "w")))
    return fail(err, errlen, "json: %s: %s", path, strerror(errno));
  if (fputs(j->buf, f) == EOF) {
    fclose(f);
    return fail(err, errlen, "json: write %s: %s", path, strerror(errno));
  }
  if (fclose(f) != 0)
    return fail(err, errlen, "json: close %s: %s", path, strerror(errno));
  return 0;
}

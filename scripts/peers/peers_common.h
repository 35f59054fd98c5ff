/*
 * peers_common.h: what the peer drivers (petsc_cg.c, hypre_fsai.c) share and
 * that needs neither PETSc nor hypre: the row partition, the poisson7 generator,
 * a Matrix Market reader that keeps one rank's rows, wall-clock time and a tiny
 * JSON writer. Integers are int64_t; each driver converts to its library's types.
 */
#ifndef PEERS_COMMON_H
#define PEERS_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* peer_rows is one rank's stripe of a square matrix in CSR with global column
 * indices, sorted and unique within each row. */
typedef struct {
  int64_t n;       /* global dimension */
  int64_t first;   /* global index of the first local row */
  int64_t nrows;   /* number of local rows */
  int64_t *rowptr; /* nrows+1 offsets into col/val */
  int64_t *col;    /* global column indices */
  double *val;
} peer_rows;

/* peer_split gives rank its rows [*lo, *hi) of n rows over size ranks: the first
 * n%size ranks get one row more (the same split as fsai-dist's
 * dsmat.NewPartition and PETSc's PetscSplitOwnership). */
void peer_split(int64_t n, int size, int rank, int64_t *lo, int64_t *hi);

/* peer_parse_poisson7 parses "poisson7:N" into N (> 1). It returns 0 on success,
 * -1 with a message in err otherwise. */
int peer_parse_poisson7(const char *spec, int64_t *N, char *err, size_t errlen);

/* peer_poisson7 generates rows [lo, hi) of the 7-point Laplacian on an N^3 grid
 * in natural ordering idx = x + N*(y + N*z): 6 on the diagonal and -1 for each
 * neighbour inside the grid (Dirichlet boundary, no entry outside). */
int peer_poisson7(int64_t N, int64_t lo, int64_t hi, peer_rows *out, char *err, size_t errlen);

/* peer_read_mm reads a Matrix Market "coordinate real|integer symmetric|general"
 * square matrix and keeps the rows this rank owns under peer_split. Every rank
 * reads the whole file: meant for the small and medium matrices peers run on.
 * Symmetric files may store either triangle; both triangles are produced.
 * Duplicate entries are summed. */
int peer_read_mm(const char *path, int size, int rank, peer_rows *out, char *err, size_t errlen);

/* peer_rows_nnz is the number of stored local entries. */
int64_t peer_rows_nnz(const peer_rows *r);

void peer_rows_free(peer_rows *r);

/* peer_wtime is a monotonic wall clock in seconds. */
double peer_wtime(void);

/* peer_json builds one flat JSON object with fields in insertion order. */
typedef struct {
  char buf[4096];
  size_t len;
  int fields;
  int overflow;
} peer_json;

void peer_json_init(peer_json *j);
void peer_json_str(peer_json *j, const char *key, const char *val);
void peer_json_int(peer_json *j, const char *key, int64_t val);
/* peer_json_num writes val with 10 significant digits, or null when it is not finite. */
void peer_json_num(peer_json *j, const char *key, double val);
void peer_json_null(peer_json *j, const char *key);
void peer_json_bool(peer_json *j, const char *key, int val);
/* peer_json_finish closes the object, prints it on stdout and, when path is
 * neither NULL nor empty, writes it to path. It returns 0, or -1 with a message
 * in err. */
int peer_json_finish(peer_json *j, const char *path, char *err, size_t errlen);

#endif

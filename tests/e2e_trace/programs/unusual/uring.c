/* An io_uring user (liburing): writes and reads back a file through the ring, with work()
   called on every completion, and some requests forced to the kernel's io-wq worker threads
   (IOSQE_ASYNC), which are threads of this process that never run user code. */
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "work.h"

enum { kBlocks = 256, kBlockSize = 512, kDepth = 32 };

static void submit_and_reap(struct io_uring* ring, int fd, int writing, char* buffers) {
  for (int first = 0; first < kBlocks; first += kDepth) {
    for (int i = first; i < first + kDepth; ++i) {
      struct io_uring_sqe* sqe = io_uring_get_sqe(ring);
      char* buffer = buffers + (size_t)i * kBlockSize;
      if (writing)
        io_uring_prep_write(sqe, fd, buffer, kBlockSize, (unsigned long long)i * kBlockSize);
      else
        io_uring_prep_read(sqe, fd, buffer, kBlockSize, (unsigned long long)i * kBlockSize);
      if (i % 4 == 0) sqe->flags |= IOSQE_ASYNC;
      io_uring_sqe_set_data64(sqe, (unsigned long long)i);
    }
    io_uring_submit(ring);
    for (int n = 0; n < kDepth; ++n) {
      struct io_uring_cqe* cqe;
      if (io_uring_wait_cqe(ring, &cqe) != 0) abort();
      work((long)io_uring_cqe_get_data64(cqe) + (writing ? 0 : 100000) + (cqe->res == kBlockSize ? 0 : 1000000), NULL);
      io_uring_cqe_seen(ring, cqe);
    }
  }
}

int main(int argc, char** argv) {
  char path[] = "/tmp/xprobe-uring-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  unlink(path);
  struct io_uring ring;
  if (io_uring_queue_init(kDepth, &ring, 0) != 0) return 2;
  char* out = malloc((size_t)kBlocks * kBlockSize);
  char* in = calloc(kBlocks, kBlockSize);
  for (size_t i = 0; i < (size_t)kBlocks * kBlockSize; ++i) out[i] = (char)(i * 7 + i / 512);
  int rounds = argc > 1 ? atoi(argv[1]) : 4;
  unsigned long checksum = 0;
  for (int round = 0; round < rounds; ++round) {
    submit_and_reap(&ring, fd, 1, out);
    submit_and_reap(&ring, fd, 0, in);
    for (size_t i = 0; i < (size_t)kBlocks * kBlockSize; ++i) checksum = checksum * 31 + (unsigned char)in[i];
    if (memcmp(in, out, (size_t)kBlocks * kBlockSize) != 0) return 3;
    memset(in, 0, (size_t)kBlocks * kBlockSize);
  }
  io_uring_queue_exit(&ring);
  printf("uring rounds=%d checksum=%lx\n", rounds, checksum);
  print_work_record("uring");
  return 0;
}

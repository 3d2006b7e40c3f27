#pragma once
// The one way to have no thread of a process run for a while (to write code into it, to map
// memory in it): every running thread is stopped when the scope begins, and resumed when it
// ends, all but the thread whose stop the caller is handling (it stays stopped for its
// handler). A scope inside another one stops and resumes nothing.
#include <sys/types.h>

#include "support/result.h"
#include "target/process.h"

namespace xprobe::supervisor {

class AllThreadsStopped {
 public:
  AllThreadsStopped(target::Process& process, pid_t keep_stopped);
  ~AllThreadsStopped();
  AllThreadsStopped(const AllThreadsStopped&) = delete;
  AllThreadsStopped& operator=(const AllThreadsStopped&) = delete;
  // Whether every thread could be stopped.
  const Status& status() const { return status_; }

 private:
  target::Process& process_;
  pid_t keep_stopped_;
  bool stopped_some_;
  Status status_;
};

}  // namespace xprobe::supervisor

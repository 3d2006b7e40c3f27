// Signals while probes are hit: self-sent SIGUSR1 whose handler calls a probed function,
// a fast SIGALRM timer interrupting probed code (also while it runs out of line), and a
// group-stop (SIGSTOP) ended by a SIGCONT from a child.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int handled = 0;
static volatile int alarms = 0;

__attribute__((noinline)) int in_handler(int x) { return x + 1; }
__attribute__((noinline)) long busy(long i) { return i * 3 + (i & 1); }

static void on_usr1(int signal) { (void)signal; handled = in_handler(handled); }
static void on_alarm(int signal) { (void)signal; ++alarms; }

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_flags = SA_RESTART;
  action.sa_handler = on_usr1;
  sigaction(SIGUSR1, &action, NULL);
  action.sa_handler = on_alarm;
  sigaction(SIGALRM, &action, NULL);
  struct itimerval timer = {{0, 300}, {0, 300}};
  setitimer(ITIMER_REAL, &timer, NULL);
  long total = 0;
  for (long i = 0; i < 6000; ++i) {
    total += busy(i);
    if (i % 300 == 0) kill(getpid(), SIGUSR1);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    usleep(50 * 1000);
    kill(getppid(), SIGCONT);
    _exit(0);
  }
  raise(SIGSTOP);
  int status = 0;
  waitpid(child, &status, 0);
  // How many alarms arrive depends on speed: not part of the output.
  printf("total=%ld handled=%d child=%d\n", total, handled, WEXITSTATUS(status));
  return 0;
}

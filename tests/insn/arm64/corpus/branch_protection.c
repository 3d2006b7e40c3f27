/* Built twice: -mbranch-protection=standard (BTI, PACIASP/AUTIASP in the hint space) and with
   -march=armv8.3-a (RETAA and the other non-hint PAC forms). */
typedef int (*operation)(int);

static int twice(int x) { return 2 * x; }
static int square(int x) { return x * x; }
operation operations[] = {twice, square};

int apply(int which, int x) { return operations[which & 1](x) + 1; }

int dispatch(int selector, int x) {
  switch (selector) {
    case 0: return x + 3;
    case 1: return x * 7;
    case 2: return x - 11;
    case 3: return x ^ 0x55;
    case 4: return x << 3;
    case 5: return apply(x, selector);
    default: return -1;
  }
}

int tail_call(int which, int x) { return operations[which & 1](x); }

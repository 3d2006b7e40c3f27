// A Go program for the tracer: goroutines that migrate between threads, stacks that the
// runtime grows (copies to a larger place) while a probed call is active, and probed calls
// nested by recursion. It counts what it did (calls, the sum of their arguments and of their
// results), so a test can compare the events with the program's own account.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
)

// grow recurses with large frames, so the goroutine's stack is copied to a larger one while
// work's frame (and its probed return) is on it. Its result: the sum of (x+i)&255, i=0..depth.
//
//go:noinline
func grow(x int, depth int) int {
	var pad [512]byte
	pad[x%512] = byte(x)
	if depth == 0 {
		return int(pad[x%512])
	}
	return grow(x+1, depth-1) + int(pad[x%512])
}

// work is the probed function. Go's register ABI passes its integer arguments in rax, rbx,
// rcx, rdi (x86-64; x0..x3 on arm64) and its result in rax (x0): x is where the System V ABI's
// first argument is, so `$arg1` is x on x86-64 and `$retval` the result.
//
//go:noinline
func work(a, b, c, x int) int {
	if x%5 == 0 {
		runtime.Gosched() // another thread may run the rest of this call
	}
	if x%7 == 0 {
		return a + b + c + grow(x, 48)
	}
	if x%11 == 0 && x > 0 {
		inner := work(a, b, c, x-1) // a probed call inside a probed call
		account(x-1, inner)
		return inner + 1
	}
	return a + b + c + x*3 + 1
}

var accountLock sync.Mutex
var calls, argumentSum, resultSum int

// account records one call of work: its argument and its result.
func account(x, result int) {
	accountLock.Lock()
	calls++
	argumentSum += x
	resultSum += result
	accountLock.Unlock()
}

func main() {
	goroutines, perGoroutine := 40, 300
	if len(os.Args) > 2 {
		goroutines, _ = strconv.Atoi(os.Args[1])
		perGoroutine, _ = strconv.Atoi(os.Args[2])
	}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < perGoroutine; i++ {
				x := g*perGoroutine + i
				account(x, work(0, 0, 0, x))
			}
		}(g)
	}
	wg.Wait()
	fmt.Printf("calls=%d argument_sum=%d result_sum=%d\n", calls, argumentSum, resultSum)
}

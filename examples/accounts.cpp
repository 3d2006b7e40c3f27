// A C++ program for the README's cookbook: methods probed by their demangled names
// (`Account::deposit`, `bank::Ledger::post(long)`).
#include <cstdio>
#include <string>
#include <vector>

namespace bank {

class Ledger {
 public:
  __attribute__((noinline)) long post(long amount) {
    entries_.push_back(amount);
    return static_cast<long>(entries_.size());
  }

 private:
  std::vector<long> entries_;
};

}  // namespace bank

class Account {
 public:
  explicit Account(std::string owner) : owner_(std::move(owner)) {}
  __attribute__((noinline)) long deposit(long amount) {
    balance_ += amount;
    ledger_.post(amount);
    return balance_;
  }
  const std::string& owner() const { return owner_; }

 private:
  std::string owner_;
  long balance_ = 0;
  bank::Ledger ledger_;
};

int main() {
  Account alice("alice");
  long total = 0;
  for (long amount : {100L, 250L, 75L}) total = alice.deposit(amount);
  std::printf("%s has %ld\n", alice.owner().c_str(), total);
  return 0;
}

// C++ for source-level probes: a namespace, a class with a method defined out of the class,
// a parameter passed by reference, members read through `this`.
#include <cstdio>

namespace shop {

struct Item {
  int price;
  int count;
};

class Cart {
 public:
  explicit Cart(int tax) : tax_(tax) {}
  int add(const Item& item, int times);
  int total() const { return total_; }

 private:
  int tax_;
  int total_ = 0;
};

__attribute__((noinline)) int Cart::add(const Item& item, int times) {
  total_ += (item.price * item.count + tax_) * times;
  return total_;
}

}  // namespace shop

int main(int argc, char**) {
  shop::Cart cart(3);
  for (int i = 0; i < 4; ++i) {
    const shop::Item item{10 + i, i + 1};
    cart.add(item, argc);
  }
  std::printf("total %d\n", cart.total());
  return 0;
}

// Prints the generated API reference (see scripts/update-readme).
#include <iostream>

#include <csiop/reference.hpp>

int main() {
  std::cout << csiop::docs::apiReference() << "\n";
  return 0;
}

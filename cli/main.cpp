#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  return csiop::cli::run(argc, argv, {std::cin, std::cout, std::cerr});
}

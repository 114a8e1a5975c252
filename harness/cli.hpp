#pragma once
namespace repix::cli {
int main(int argc, char** argv);
}

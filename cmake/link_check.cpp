// The entry point of the per-area link checks (CMakeLists.txt: link-check-<area>): the area's
// library is linked whole, so every symbol it references must come from what it declares.
int main() { return 0; }

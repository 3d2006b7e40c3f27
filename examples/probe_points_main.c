/* Links the assembly probe points into an executable; only accepted_function is called. */
long accepted_function(void);
int main(void) { return accepted_function() == 0; }

/* Does not compile: the error must name this file and line 4. */
double broken(double x)
{
    return x *;
}

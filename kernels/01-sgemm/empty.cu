// A kernel that does nothing: timed, it measures what a launch costs the caller (the host
// enqueueing it, and the GPU starting and finishing a grid), with no work inside.
extern "C" __global__ void empty() {}

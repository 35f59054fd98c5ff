# runs its arguments and prints the child's peak resident memory (MB) on stderr
import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:]).returncode
print(f"MAXRSS_MB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}", file=sys.stderr)
sys.exit(rc)

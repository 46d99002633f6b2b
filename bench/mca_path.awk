# The common path of one loop, from `objdump -d --no-show-raw-insn` output,
# as llvm-mca input: the instructions from the loop head (the target of the
# function's last `back` branch) to that branch, following the branches
# listed in `take` as taken and dropping every branch (the recipe of
# /work/shared/research/float32-gelu-kernels.md, made repeatable).
#
#   aarch64-linux-gnu-objdump -d --no-show-raw-insn gx_kernels.o > k.dis
#   awk -v fn=gx_k_lut_fwd_baseline.constprop.0 -v take=b.ls -f bench/mca_path.awk k.dis > loop.s
#   llvm-mca -mtriple=aarch64 -mcpu=neoverse-n1 -iterations=200 loop.s
#
# fn: the symbol; take: comma-separated branch mnemonics on the common path
# (default none); back: the back-edge mnemonic (default b.ne).  One element
# per iteration for a scalar loop: Total Cycles / Iterations is cycles per
# element.
BEGIN { if (back == "") back = "b.ne"; ntake = split(take, tk, ",") }
$0 ~ "<" fn ">:$" { on = 1; next }
on && /^$/ { on = 0 }
on && /^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); line[a] = $0; order[++n] = a }
function is_taken(op,   k) { for (k = 1; k <= ntake; k++) if (op == tk[k]) return 1; return 0 }
function index_of(addr,   k) { for (k = 1; k <= n; k++) if (order[k] == addr) return k; return n + 1 }
END {
    if (n == 0) { print "mca_path.awk: no function " fn > "/dev/stderr"; exit 1 }
    for (i = n; i > 0; i--) {
        split(line[order[i]], f, "\t")
        if (f[2] == back) { split(f[3], t, " "); head = t[1]; break }
    }
    if (head == "") { print "mca_path.awk: no " back " in " fn > "/dev/stderr"; exit 1 }
    i = index_of(head)
    for (steps = 0; i <= n && steps < 10000; steps++) {
        split(line[order[i]], f, "\t")
        op = f[2]; args = f[3]
        if (op == back) break
        if (is_taken(op)) { split(args, t, " "); i = index_of(t[1]); continue }
        if (op !~ /^b(\.[a-z]+)?$/ && op !~ /^(cbn?z|tbn?z|bl|ret)$/) {
            sub(/[ \t]*\/\/.*/, "", args)
            print op "\t" args
        }
        i++
    }
}

package gcout

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Build compiles the package in the current directory (a test's own) with
// -gcflags=gcflags, default flags otherwise, and returns the compiler's
// output. It skips the test when the go command is not on PATH and fails it
// when the build fails.
func Build(t testing.TB, gcflags string) string {
	t.Helper()
	return BuildEnv(t, gcflags)
}

// BuildEnv is Build with env ("GOARCH=arm64", "GOARM64=v8.1", ...) added to
// the go command's environment: the compiler's output for another
// architecture, which the go command cross-compiles without any tool of
// that architecture.
func BuildEnv(t testing.TB, gcflags string, env ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "build", "-gcflags="+gcflags, "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v go build -gcflags=%s: %v\n%s", env, gcflags, err, out)
	}
	return string(out)
}

// listingRE matches an instruction line of the -S listing:
// "\t0x0003 00003 (/path/file.go:53)\tMOVQ\tDI, (CX)".
var listingRE = regexp.MustCompile(`^\t0x[0-9a-f]+ \d+ \([^)]*\)\t(\S+)\t?(.*)$`)

// Instructions returns the instructions of the function whose symbol ends
// in symbol ("/internal/record.PublishRecord", "/internal/atomicbuf.storeRel64")
// in a -S listing, in code layout order, written "MOVQ DI, (CX)", without
// the pseudo-instructions TEXT, FUNCDATA and PCDATA. It returns nil when
// the listing has no such function.
func Instructions(listing, symbol string) []string {
	header := symbol + " STEXT"
	var instrs []string
	in := false
	for _, line := range strings.Split(listing, "\n") {
		if !strings.HasPrefix(line, "\t") {
			in = strings.Contains(line, header)
			continue
		}
		m := listingRE.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		switch m[1] {
		case "TEXT", "FUNCDATA", "PCDATA":
			continue
		}
		instrs = append(instrs, strings.TrimSpace(m[1]+" "+m[2]))
	}
	return instrs
}

// Arm64Ops returns instrs, arm64 instructions as Instructions writes them,
// without the ones that do nothing: NOP, and HINT $0, which the compiler
// leaves where it inlined a call.
func Arm64Ops(instrs []string) []string {
	var out []string
	for _, in := range instrs {
		if in != "NOP" && in != "HINT $0" {
			out = append(out, in)
		}
	}
	return out
}

// arm64StoreOps are the arm64 instructions that store their operands to the
// memory named by their last operand (Go's assembler syntax: "MOVD R1,
// 8(R0)", "STP (R1, R2), (R3)", "STLR R1, (R0)").
var arm64StoreOps = map[string]bool{
	"MOVD": true, "MOVW": true, "MOVH": true, "MOVB": true,
	"FMOVD": true, "FMOVS": true, "FMOVQ": true,
	"STP": true, "STPW": true, "FSTPD": true, "FSTPS": true, "FSTPQ": true,
	"VST1": true, "VST2": true, "VST3": true, "VST4": true,
	"STLR": true, "STLRW": true, "STLRH": true, "STLRB": true,
}

// Arm64Store reports whether instr, an arm64 instruction as Instructions
// writes it, is a store to memory other than the stack (the function's
// frame or its arguments), and returns its destination ("(R0)", "8(R2)",
// "(R4)(R1)").
func Arm64Store(instr string) (dst string, ok bool) {
	op, args, _ := strings.Cut(instr, " ")
	op, _, _ = strings.Cut(op, ".") // MOVD.W, MOVD.P
	i := strings.LastIndex(args, ", ")
	if !arm64StoreOps[op] || i < 0 {
		return "", false
	}
	dst = args[i+2:]
	if !strings.Contains(dst, "(") || strings.Contains(dst, "(RSP)") || strings.Contains(dst, "(FP)") || strings.Contains(dst, "(SP)") {
		return "", false
	}
	return dst, true
}

// Arm64Branch reports whether instr, an arm64 instruction as Instructions
// writes it, may transfer control elsewhere (a jump, a conditional branch,
// a call or a return).
func Arm64Branch(instr string) bool {
	op, _, _ := strings.Cut(instr, " ")
	switch op {
	case "JMP", "RET", "CALL", "B", "BL", "CBZ", "CBNZ", "CBZW", "CBNZW", "TBZ", "TBNZ",
		"BEQ", "BNE", "BCS", "BHS", "BCC", "BLO", "BMI", "BPL", "BVS", "BVC",
		"BHI", "BLS", "BGE", "BLT", "BGT", "BLE", "BAL":
		return true
	}
	return false
}

// Arm64StoreIndexes returns the indexes in instrs (arm64 instructions as
// Instructions writes them) of the stores to memory other than the stack
// (Arm64Store).
func Arm64StoreIndexes(instrs []string) []int {
	var out []int
	for i, in := range instrs {
		if _, ok := Arm64Store(in); ok {
			out = append(out, i)
		}
	}
	return out
}

// Arm64OrderedAt reports whether instrs[i] is an ordered store
// (atomicbuf.StoreOrdered64 and StoreOrdered32): a store-release (STLR,
// STLRW) followed at once by a load-acquire (LDAR, LDARW) of the same
// word, after which no later store can become visible before it.
func Arm64OrderedAt(instrs []string, i int) bool {
	dst, ok := Arm64Store(instrs[i])
	if !ok || i+1 >= len(instrs) {
		return false
	}
	switch op, _, _ := strings.Cut(instrs[i], " "); op {
	case "STLR":
		return strings.HasPrefix(instrs[i+1], "LDAR "+dst+", ")
	case "STLRW":
		return strings.HasPrefix(instrs[i+1], "LDARW "+dst+", ")
	}
	return false
}

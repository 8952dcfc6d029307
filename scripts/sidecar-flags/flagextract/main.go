// flagextract statically determines the command-line flag names that a Go
// binary (a kubernetes-csi sidecar) accepts, reading the source tree of a git
// tag (main package + committed vendor/ directory) straight from a git mirror.
//
// Method (an abstract interpretation of start-up, without type checking):
//
//  1. Load the main package and the transitive closure of the non-stdlib
//     packages it imports (resolved to the module itself or to vendor/), keeping
//     only the files that build for linux/amd64 with CGO_ENABLED=0, no _test.go.
//  2. Replay start-up in Go's order: package-level variable initialisers and
//     init() functions of every package (dependencies first), then those of the
//     main package, then main() up to the first Parse() of flag.CommandLine /
//     pflag.CommandLine. Calls to package functions (same package or imported,
//     module or vendored) are followed, binding *FlagSet arguments to their
//     parameters, so helpers like klog.InitFlags, logsapi.AddGoFlags or
//     standardflags.RegisterCommonFlags are read at the vendored version.
//  3. Registrations (flag.X / fs.XVar / fs.Var / pflag ...P variants / Func /
//     BoolFunc / TextVar) are recorded per flag set (flag.CommandLine,
//     pflag.CommandLine, package-level FlagSet variables such as klog's private
//     commandLine, or new FlagSets). Copies between flag sets are modelled:
//     src.VisitAll(func(f){ dst.Var(f.Value, f.Name, ...) }) and
//     dst.AddGoFlagSet(src) / dst.AddFlagSet(src).
//  4. The result is the content of the flag set that main() parses, plus
//     "h" and "help" (always accepted by flag and pflag).
//
// Anything the interpreter cannot resolve (a flag name that is not a constant,
// a registration on an unknown receiver, a conditional registration, a method
// call with "Flag" in its name that is not modelled, a copy with a filter) is
// reported on stderr as WARN so that it can be reviewed; conditional
// registrations guarded by the "json" log format (component-base logsapi) are
// resolved by checking whether k8s.io/component-base/logs/json/register is
// linked in.
//
// Usage: flagextract -git GITDIR -main cmd/NAME -image NAME [-v] TAG...
// Output: one TSV line per tag: image<TAB>tag<TAB>comma-separated flags.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ---------------------------------------------------------------- git access

type gitRepo struct {
	dir  string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	tree map[string]string   // path -> blob (current tag)
	dirs map[string][]string // dir -> file names (current tag)
}

func openRepo(dir string) *gitRepo {
	r := &gitRepo{dir: dir}
	r.cmd = exec.Command("git", "-C", dir, "cat-file", "--batch")
	r.in, _ = r.cmd.StdinPipe()
	o, _ := r.cmd.StdoutPipe()
	r.out = bufio.NewReaderSize(o, 1<<20)
	if err := r.cmd.Start(); err != nil {
		fatalf("git cat-file: %v", err)
	}
	return r
}

func (r *gitRepo) setTag(tag string) {
	out, err := exec.Command("git", "-C", r.dir, "ls-tree", "-r", "-z", tag+"^{commit}").Output()
	if err != nil {
		fatalf("ls-tree %s: %v", tag, err)
	}
	r.tree = map[string]string{}
	r.dirs = map[string][]string{}
	for _, ent := range bytes.Split(out, []byte{0}) {
		if len(ent) == 0 {
			continue
		}
		tab := bytes.IndexByte(ent, '\t')
		meta := strings.Fields(string(ent[:tab]))
		p := string(ent[tab+1:])
		if meta[1] != "blob" {
			continue
		}
		r.tree[p] = meta[2]
		d, f := path.Split(p)
		d = strings.TrimSuffix(d, "/")
		r.dirs[d] = append(r.dirs[d], f)
	}
}

func (r *gitRepo) blob(id string) []byte {
	fmt.Fprintf(r.in, "%s\n", id)
	hdr, err := r.out.ReadString('\n')
	if err != nil {
		fatalf("cat-file: %v", err)
	}
	f := strings.Fields(hdr)
	if len(f) != 3 {
		fatalf("cat-file header %q", hdr)
	}
	n, _ := strconv.Atoi(f[2])
	buf := make([]byte, n+1)
	if _, err := io.ReadFull(r.out, buf); err != nil {
		fatalf("cat-file read: %v", err)
	}
	return buf[:n]
}

// ---------------------------------------------------------------- packages

type File struct {
	ast     *ast.File
	imports map[string]string // local name -> import path ("" name for dot/blank skipped)
	name    string
}

type constInfo struct {
	expr ast.Expr
	file *File
}

type Pkg struct {
	path, dir, name string
	files           []*File
	funcs           map[string]*ast.FuncDecl
	funcFile        map[string]*File
	consts          map[string]constInfo
	vars            map[string]*ast.ValueSpec // package-level vars
	imports         []string                  // resolved loadable import paths
	loaded          bool
}

const (
	goFlagPath    = "flag"
	pflagPath     = "github.com/spf13/pflag"
	jsonRegister  = "k8s.io/component-base/logs/json/register"
	goCL          = "go:CommandLine"
	pflagCL       = "pflag:CommandLine"
	fsNil         = "nil"
	fsUnknown     = ""
	pkgMarkerFlag = "pkg:flag"
	pkgMarkerPfl  = "pkg:pflag"
)

type loader struct {
	repo    *gitRepo
	modPath string
	fset    *token.FileSet
	pkgs    map[string]*Pkg
	astOf   map[string]*ast.File // blob id -> parsed file (cache across tags)
	used    map[string]bool
	ctx     build.Context
}

func (l *loader) dirFor(ip string) (string, bool) {
	if ip == l.modPath || strings.HasPrefix(ip, l.modPath+"/") {
		d := strings.TrimPrefix(strings.TrimPrefix(ip, l.modPath), "/")
		if _, ok := l.repo.dirs[d]; ok {
			return d, true
		}
		return "", false
	}
	d := "vendor/" + ip
	if _, ok := l.repo.dirs[d]; ok {
		return d, true
	}
	return "", false
}

func (l *loader) parse(p string) *ast.File {
	id := l.repo.tree[p]
	l.used[id] = true
	if f, ok := l.astOf[id]; ok {
		return f
	}
	src := l.repo.blob(id)
	f, err := parser.ParseFile(l.fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		warnf("parse %s: %v", p, err)
		return nil
	}
	l.astOf[id] = f
	return f
}

// pkgName returns the package name for an import path (loading it if it is a
// module/vendored package, last element otherwise).
func (l *loader) pkgName(ip string) string {
	if p := l.load(ip); p != nil && p.name != "" {
		return p.name
	}
	base := path.Base(ip)
	return base
}

func (l *loader) load(ip string) *Pkg {
	if p, ok := l.pkgs[ip]; ok {
		return p
	}
	dir, ok := l.dirFor(ip)
	if !ok {
		l.pkgs[ip] = nil
		return nil
	}
	p := &Pkg{path: ip, dir: dir, funcs: map[string]*ast.FuncDecl{}, funcFile: map[string]*File{},
		consts: map[string]constInfo{}, vars: map[string]*ast.ValueSpec{}}
	l.pkgs[ip] = p
	names := append([]string(nil), l.repo.dirs[dir]...)
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := l.ctx.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		af := l.parse(dir + "/" + n)
		if af == nil {
			continue
		}
		if p.name == "" {
			p.name = af.Name.Name
		} else if af.Name.Name != p.name {
			continue // e.g. documentation package
		}
		p.files = append(p.files, &File{ast: af, name: dir + "/" + n})
	}
	// second pass: imports, decls
	seen := map[string]bool{}
	for _, f := range p.files {
		f.imports = map[string]string{}
		for _, is := range f.ast.Imports {
			ipath, _ := strconv.Unquote(is.Path.Value)
			if !seen[ipath] {
				seen[ipath] = true
				if _, ok := l.dirFor(ipath); ok {
					p.imports = append(p.imports, ipath)
				}
			}
			var name string
			if is.Name != nil {
				name = is.Name.Name
			} else {
				name = l.pkgName(ipath)
			}
			if name == "_" || name == "." {
				continue
			}
			f.imports[name] = ipath
		}
		for _, d := range f.ast.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name != "init" {
					p.funcs[d.Name.Name] = d
					p.funcFile[d.Name.Name] = f
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok {
						continue
					}
					for i, n := range vs.Names {
						if d.Tok == token.CONST {
							if i < len(vs.Values) {
								p.consts[n.Name] = constInfo{vs.Values[i], f}
							}
						} else if d.Tok == token.VAR {
							p.vars[n.Name] = vs
						}
					}
				}
			}
		}
	}
	p.loaded = true
	return p
}

// ---------------------------------------------------------------- interpreter

type origin struct {
	pos  string
	note string
}

type interp struct {
	l        *loader
	sets     map[string]map[string]origin // flag set -> name -> where
	parsed   string
	stopped  bool
	memo     map[string]bool
	stack    map[string]bool
	depth    int
	jsonOK   bool
	warns    []string
	verbose  bool
	phase    string
	newCount int
}

type frame struct {
	pkg  *Pkg
	file *File
	env  map[string]string
}

func (in *interp) warn(pos token.Pos, format string, a ...any) {
	in.warns = append(in.warns, fmt.Sprintf("%s: %s", in.l.fset.Position(pos), fmt.Sprintf(format, a...)))
}

func (in *interp) add(set, name string, pos token.Pos, note string) {
	if in.sets[set] == nil {
		in.sets[set] = map[string]origin{}
	}
	if _, ok := in.sets[set][name]; !ok {
		in.sets[set][name] = origin{in.l.fset.Position(pos).String(), note}
	}
}

var regRE = regexp.MustCompile(`^(Bool|String|Int|Int8|Int16|Int32|Int64|Uint|Uint8|Uint16|Uint32|Uint64|Float32|Float64|Duration|StringSlice|StringArray|StringToString|StringToInt|StringToInt64|IntSlice|Int32Slice|Int64Slice|UintSlice|Float32Slice|Float64Slice|BoolSlice|DurationSlice|IP|IPSlice|IPMask|IPNet|BytesHex|BytesBase64|Count)(Var)?(P)?$`)

// regInfo describes flag-definition methods: index of the name argument,
// exact argument count, and the index of the shorthand (-1 if none).
func regInfo(m string) (nameIdx, nargs, shortIdx int, ok bool) {
	switch m {
	case "Var", "TextVar":
		if m == "TextVar" {
			return 1, 4, -1, true
		}
		return 1, 3, -1, true
	case "VarP", "VarPF":
		return 1, 4, 2, true
	case "Func", "BoolFunc":
		return 0, 3, -1, true
	}
	sm := regRE.FindStringSubmatch(m)
	if sm == nil {
		return 0, 0, 0, false
	}
	isVar, isP := sm[2] != "", sm[3] != ""
	nargs = 3
	if sm[1] == "Count" {
		nargs = 2
	}
	nameIdx = 0
	if isVar {
		nameIdx = 1
		nargs++
	}
	shortIdx = -1
	if isP {
		shortIdx = nameIdx + 1
		nargs++
	}
	return nameIdx, nargs, shortIdx, true
}

func (in *interp) constString(e ast.Expr, pkg *Pkg, file *File, depth int) (string, bool) {
	if depth > 10 {
		return "", false
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.ParenExpr:
		return in.constString(e.X, pkg, file, depth+1)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, ok1 := in.constString(e.X, pkg, file, depth+1)
			b, ok2 := in.constString(e.Y, pkg, file, depth+1)
			return a + b, ok1 && ok2
		}
	case *ast.Ident:
		if pkg != nil {
			if c, ok := pkg.consts[e.Name]; ok {
				return in.constString(c.expr, pkg, c.file, depth+1)
			}
		}
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok && file != nil {
			if ip, ok := file.imports[id.Name]; ok {
				if p := in.l.load(ip); p != nil {
					if c, ok := p.consts[e.Sel.Name]; ok {
						return in.constString(c.expr, p, c.file, depth+1)
					}
				}
			}
		}
	}
	return "", false
}

func isFlagSetType(t ast.Expr) bool {
	found := false
	ast.Inspect(t, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok && s.Sel.Name == "FlagSet" {
			found = true
		}
		return true
	})
	return found
}

func isNewFlagSet(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	s, ok := c.Fun.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "NewFlagSet"
}

func (in *interp) pkgVarIsFlagSet(p *Pkg, name string) bool {
	vs, ok := p.vars[name]
	if !ok {
		return false
	}
	if vs.Type != nil && isFlagSetType(vs.Type) {
		return true
	}
	for i, n := range vs.Names {
		if n.Name == name && i < len(vs.Values) && isNewFlagSet(vs.Values[i]) {
			return true
		}
	}
	return false
}

// eval returns the abstract flag set an expression denotes (or fsUnknown).
func (in *interp) eval(e ast.Expr, fr *frame) string {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return in.eval(e.X, fr)
	case *ast.StarExpr:
		return in.eval(e.X, fr)
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return in.eval(e.X, fr)
		}
	case *ast.Ident:
		if e.Name == "nil" {
			return fsNil
		}
		if v, ok := fr.env[e.Name]; ok {
			return v
		}
		if ip, ok := fr.file.imports[e.Name]; ok {
			switch ip {
			case goFlagPath:
				return pkgMarkerFlag
			case pflagPath:
				return pkgMarkerPfl
			}
			return fsUnknown
		}
		if in.pkgVarIsFlagSet(fr.pkg, e.Name) {
			return "var:" + fr.pkg.path + "." + e.Name
		}
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if ip, ok := fr.file.imports[id.Name]; ok {
				if e.Sel.Name == "CommandLine" && ip == goFlagPath {
					return goCL
				}
				if e.Sel.Name == "CommandLine" && ip == pflagPath {
					return pflagCL
				}
				if p := in.l.load(ip); p != nil && in.pkgVarIsFlagSet(p, e.Sel.Name) {
					return "var:" + p.path + "." + e.Sel.Name
				}
				return fsUnknown
			}
		}
		if e.Sel.Name == "FlagSet" {
			return in.eval(e.X, fr)
		}
	case *ast.CallExpr:
		if s, ok := e.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "NewFlagSet" {
			in.newCount++
			return fmt.Sprintf("new:%s#%d", in.l.fset.Position(e.Pos()), in.newCount)
		}
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			if v := in.eval(el, fr); v != fsUnknown && v != fsNil {
				return v
			}
		}
	}
	return fsUnknown
}

// target normalises a receiver flag set: package markers mean CommandLine.
func target(fs string) string {
	switch fs {
	case pkgMarkerFlag:
		return goCL
	case pkgMarkerPfl:
		return pflagCL
	}
	return fs
}

// walk interprets a node (statement list, expression ...) in source order.
func (in *interp) walk(n ast.Node, fr *frame, conds []ast.Node) {
	if in.stopped || n == nil {
		return
	}
	switch n := n.(type) {
	case *ast.BlockStmt:
		for _, s := range n.List {
			in.walk(s, fr, conds)
		}
		return
	case *ast.IfStmt:
		in.walk(n.Init, fr, conds)
		in.walk(n.Cond, fr, conds)
		c2 := append([]ast.Node(nil), conds...)
		if n.Init != nil {
			c2 = append(c2, n.Init) // keep the init statement for condition checks
		}
		c2 = append(c2, n.Cond)
		in.walk(n.Body, fr, c2)
		in.walk(n.Else, fr, c2)
		return
	case *ast.AssignStmt:
		for _, r := range n.Rhs {
			in.walk(r, fr, conds)
		}
		if len(n.Lhs) == len(n.Rhs) {
			for i, lh := range n.Lhs {
				id, ok := lh.(*ast.Ident)
				if !ok {
					continue
				}
				v := in.eval(n.Rhs[i], fr)
				if v == fsUnknown {
					continue
				}
				// "if fs == nil { fs = flag.CommandLine }": only when nil.
				if cur, ok := fr.env[id.Name]; ok && cur != fsNil && cur != fsUnknown && guardedByNil(conds, id.Name) {
					continue
				}
				fr.env[id.Name] = v
			}
		}
		return
	case *ast.ValueSpec:
		for _, v := range n.Values {
			in.walk(v, fr, conds)
		}
		for i, id := range n.Names {
			if i < len(n.Values) {
				if v := in.eval(n.Values[i], fr); v != fsUnknown {
					fr.env[id.Name] = v
				}
			} else if n.Type != nil && isFlagSetType(n.Type) {
				in.newCount++
				fr.env[id.Name] = fmt.Sprintf("new:%s#%d", in.l.fset.Position(n.Pos()), in.newCount)
			}
		}
		return
	case *ast.CallExpr:
		in.call(n, fr, conds)
		return
	case *ast.FuncLit:
		// a closure that is not called here: not executed at this point.
		return
	case *ast.CaseClause:
		for _, e := range n.List {
			in.walk(e, fr, conds)
		}
		c2 := append([]ast.Node(nil), conds...)
		c2 = append(c2, n)
		for _, s := range n.Body {
			in.walk(s, fr, c2)
		}
		return
	}
	// generic: visit children in order
	ast.Inspect(n, func(c ast.Node) bool {
		if c == n {
			return true
		}
		if c == nil {
			return false
		}
		switch c.(type) {
		case ast.Stmt, ast.Expr, *ast.ValueSpec, *ast.GenDecl, *ast.DeclStmt:
			in.walk(c, fr, conds)
			return false
		}
		return true
	})
}

func guardedByNil(conds []ast.Node, name string) bool {
	for _, c := range conds {
		if b, ok := c.(*ast.BinaryExpr); ok && b.Op == token.EQL {
			if id, ok := b.X.(*ast.Ident); ok && id.Name == name {
				if y, ok := b.Y.(*ast.Ident); ok && y.Name == "nil" {
					return true
				}
			}
		}
	}
	return false
}

func (in *interp) src(n ast.Node) string {
	var b bytes.Buffer
	printer.Fprint(&b, in.l.fset, n)
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

func (in *interp) call(c *ast.CallExpr, fr *frame, conds []ast.Node) {
	if in.stopped {
		return
	}
	// Arguments first (Go evaluates operands before the call), except
	// closures, which only run if the callee calls them.
	for _, a := range c.Args {
		in.walk(a, fr, conds)
		if in.stopped {
			return
		}
	}
	switch fun := c.Fun.(type) {
	case *ast.FuncLit: // immediately invoked
		in.walk(fun.Body, fr, conds)
		return
	case *ast.Ident:
		if fd, ok := fr.pkg.funcs[fun.Name]; ok {
			in.follow(fd, fr.pkg, fr.pkg.funcFile[fun.Name], c, fr)
		}
		return
	case *ast.SelectorExpr:
		in.walk(fun.X, fr, conds)
		m := fun.Sel.Name
		if id, ok := fun.X.(*ast.Ident); ok {
			if ip, ok := fr.file.imports[id.Name]; ok && ip != goFlagPath && ip != pflagPath {
				// package function call
				if p := in.l.load(ip); p != nil {
					if fd, ok := p.funcs[m]; ok {
						in.follow(fd, p, p.funcFile[m], c, fr)
					}
				}
				return
			}
		}
		recv := in.eval(fun.X, fr)
		switch m {
		case "Parse":
			t := target(recv)
			if (t == goCL || t == pflagCL) && len(c.Args) <= 1 && in.phase == "main" {
				in.parsed = t
				in.stopped = true
				if in.verbose {
					in.warn(c.Pos(), "INFO parse of %s", t)
				}
			}
			return
		case "VisitAll":
			if len(c.Args) == 1 {
				if fl, ok := c.Args[0].(*ast.FuncLit); ok {
					in.visitAllCopy(target(recv), fl, fr, c)
					return
				}
			}
		case "AddGoFlagSet", "AddFlagSet":
			if len(c.Args) == 1 {
				src := target(in.eval(c.Args[0], fr))
				dst := target(recv)
				if src == fsUnknown || dst == fsUnknown {
					in.warn(c.Pos(), "WARN unresolved flag set copy %s", in.src(c))
					return
				}
				in.copySet(src, dst, c.Pos(), "copied by "+m)
				return
			}
		}
		if ni, nargs, si, ok := regInfo(m); ok && len(c.Args) == nargs {
			t := target(recv)
			name, okn := in.constString(c.Args[ni], fr.pkg, fr.file, 0)
			if t == fsUnknown {
				if okn {
					in.warn(c.Pos(), "WARN registration of %q on unresolved receiver: %s", name, in.src(c))
				}
				return
			}
			if !okn {
				in.warn(c.Pos(), "WARN non-constant flag name on %s: %s", t, in.src(c))
				return
			}
			note := ""
			if len(conds) > 0 {
				ct := in.condText(conds)
				if strings.Contains(ct, `"json"`) {
					if !in.jsonOK {
						in.warn(c.Pos(), "INFO skipped %q: json log format not linked (%s)", name, ct)
						return
					}
					note = "json format linked"
				} else {
					in.warn(c.Pos(), "WARN conditional registration of %q on %s under: %s", name, t, ct)
					note = "conditional: " + ct
				}
			}
			in.add(t, name, c.Pos(), note)
			if si >= 0 {
				if sh, ok := in.constString(c.Args[si], fr.pkg, fr.file, 0); ok && sh != "" && sh != name {
					in.warn(c.Pos(), "INFO shorthand %q for %q on %s", sh, name, t)
					in.add(t, "shorthand:"+sh, c.Pos(), "shorthand of "+name)
				}
			}
			return
		}
		if strings.Contains(m, "Flag") && m != "NewFlagSet" && m != "Flag" {
			in.warn(c.Pos(), "WARN unmodelled method call %s", in.src(c))
		}
	}
}

// condText renders enclosing conditions (if-init statements, conditions, case clauses).
func (in *interp) condText(conds []ast.Node) string {
	var parts []string
	for _, c := range conds {
		if cc, ok := c.(*ast.CaseClause); ok {
			var l []string
			for _, e := range cc.List {
				l = append(l, in.src(e))
			}
			parts = append(parts, "case "+strings.Join(l, ", "))
			continue
		}
		parts = append(parts, in.src(c))
	}
	return strings.Join(parts, " && ")
}

func (in *interp) copySet(src, dst string, pos token.Pos, note string) {
	if dst == src {
		return
	}
	for name := range in.sets[src] {
		if strings.HasPrefix(name, "shorthand:") && dst != pflagCL {
			continue
		}
		in.add(dst, name, pos, note+" from "+src)
	}
}

// visitAllCopy models src.VisitAll(func(f *flag.Flag){ dst.Var(f.Value, f.Name, ...) })
// and pflag variants (dst.AddGoFlag(f), dst.AddFlag(pflag.PFlagFromGoFlag(f))).
// A copy inside "switch f.Name { case "a", "b": ... }" copies only those names;
// any other filter (if / return) is reported for review.
func (in *interp) visitAllCopy(src string, fl *ast.FuncLit, fr *frame, c *ast.CallExpr) {
	var walk func(n ast.Node, only map[string]bool)
	walk = func(n ast.Node, only map[string]bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CaseClause:
				if only != nil {
					break
				}
				names := map[string]bool{}
				for _, e := range x.List {
					if s, ok := in.constString(e, fr.pkg, fr.file, 0); ok {
						names[s] = true
					} else {
						in.warn(e.Pos(), "WARN VisitAll filter with non-constant case: %s", in.src(e))
					}
				}
				if len(x.List) == 0 {
					in.warn(x.Pos(), "WARN VisitAll filter with default case (review)")
					names = nil
				}
				for _, s := range x.Body {
					walk(s, names)
				}
				return false
			case *ast.IfStmt, *ast.ReturnStmt:
				in.warn(x.Pos(), "WARN VisitAll copy with if/return filter (review): %s", in.src(c))
			case *ast.CallExpr:
				s, ok := x.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch s.Sel.Name {
				case "Var", "AddGoFlag", "AddFlag":
					dst := target(in.eval(s.X, fr))
					if dst == fsUnknown || src == fsUnknown {
						in.warn(x.Pos(), "WARN unresolved VisitAll copy %s -> %s: %s", src, dst, in.src(x))
						return true
					}
					if only == nil {
						in.copySet(src, dst, x.Pos(), "VisitAll copy")
					} else {
						for name := range in.sets[src] {
							if only[name] {
								in.add(dst, name, x.Pos(), "VisitAll filtered copy from "+src)
							}
						}
					}
				}
			}
			return true
		})
	}
	walk(fl.Body, nil)
}

func (in *interp) follow(fd *ast.FuncDecl, p *Pkg, f *File, c *ast.CallExpr, caller *frame) {
	if fd.Body == nil {
		return
	}
	env := map[string]string{}
	var keyParts []string
	i := 0
	if fd.Type.Params != nil {
		for _, fld := range fd.Type.Params.List {
			names := fld.Names
			if len(names) == 0 {
				i++
				continue
			}
			for _, n := range names {
				if i < len(c.Args) {
					if v := in.eval(c.Args[i], caller); v != fsUnknown {
						env[n.Name] = v
						keyParts = append(keyParts, n.Name+"="+v)
					}
				}
				i++
			}
		}
	}
	key := p.path + "." + fd.Name.Name + "(" + strings.Join(keyParts, ",") + ")"
	if in.memo[key] || in.stack[key] || in.depth > 40 {
		return
	}
	in.memo[key] = true
	in.stack[key] = true
	in.depth++
	in.walk(fd.Body, &frame{pkg: p, file: f, env: env}, nil)
	in.depth--
	delete(in.stack, key)
}

// runInit replays package-level var initialisers and init() functions.
func (in *interp) runInit(p *Pkg) {
	for _, f := range p.files {
		fr := &frame{pkg: p, file: f, env: map[string]string{}}
		for _, d := range f.ast.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for _, v := range vs.Values {
					in.walk(v, fr, nil)
				}
			}
		}
	}
	for _, f := range p.files {
		for _, d := range f.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Recv == nil && fd.Name.Name == "init" && fd.Body != nil {
				in.walk(fd.Body, &frame{pkg: p, file: f, env: map[string]string{}}, nil)
			}
		}
	}
}

// ---------------------------------------------------------------- driver

var warnOut io.Writer = os.Stderr

func warnf(format string, a ...any) { fmt.Fprintf(warnOut, "WARN "+format+"\n", a...) }
func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "FATAL "+format+"\n", a...)
	os.Exit(2)
}

func main() {
	gitDir := flag.String("git", "", "git directory of the mirror")
	mainDir := flag.String("main", "", "main package directory, e.g. cmd/csi-snapshotter")
	image := flag.String("image", "", "image name for the output")
	verbose := flag.Bool("v", false, "print the origin of every flag")
	flag.Parse()
	repo := openRepo(*gitDir)
	astCache := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, tag := range flag.Args() {
		repo.setTag(tag)
		gm := repo.tree["go.mod"]
		if gm == "" {
			fatalf("%s: no go.mod", tag)
		}
		modPath := ""
		for _, line := range strings.Split(string(repo.blob(gm)), "\n") {
			if strings.HasPrefix(line, "module ") {
				modPath = strings.TrimSpace(strings.TrimPrefix(line, "module "))
			}
		}
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled, ctx.Compiler = "linux", "amd64", false, "gc"
		ctx.BuildTags = nil
		ctx.OpenFile = func(p string) (io.ReadCloser, error) {
			id, ok := repo.tree[strings.TrimPrefix(p, "/")]
			if !ok {
				return nil, os.ErrNotExist
			}
			return io.NopCloser(bytes.NewReader(repo.blob(id))), nil
		}
		ctx.JoinPath = func(e ...string) string { return path.Join(e...) }
		l := &loader{repo: repo, modPath: modPath, fset: fset, pkgs: map[string]*Pkg{}, astOf: astCache, used: map[string]bool{}, ctx: ctx}
		mainPkg := l.load(modPath + "/" + *mainDir)
		if mainPkg == nil {
			fatalf("%s: cannot load %s", tag, *mainDir)
		}
		// dependency post-order (Go init order)
		var order []*Pkg
		visited := map[string]bool{}
		var visit func(ip string)
		visit = func(ip string) {
			if visited[ip] {
				return
			}
			visited[ip] = true
			p := l.load(ip)
			if p == nil {
				return
			}
			for _, d := range p.imports {
				visit(d)
			}
			order = append(order, p)
		}
		visit(mainPkg.path)
		in := &interp{l: l, sets: map[string]map[string]origin{}, memo: map[string]bool{}, stack: map[string]bool{}, verbose: *verbose, jsonOK: visited[jsonRegister] && l.pkgs[jsonRegister] != nil}
		in.phase = "init"
		for _, p := range order {
			if p == mainPkg {
				continue
			}
			in.runInit(p)
		}
		initGo := len(in.sets[goCL])
		initPflag := len(in.sets[pflagCL])
		in.phase = "main"
		in.runInit(mainPkg)
		fd := mainPkg.funcs["main"]
		if fd == nil {
			fatalf("%s: no func main", tag)
		}
		in.walk(fd.Body, &frame{pkg: mainPkg, file: mainPkg.funcFile["main"], env: map[string]string{}}, nil)
		if in.parsed == "" {
			fatalf("%s: no Parse of flag.CommandLine/pflag.CommandLine found in main", tag)
		}
		res := in.sets[in.parsed]
		names := []string{"h", "help"}
		for n := range res {
			if strings.HasPrefix(n, "shorthand:") {
				continue
			}
			if n != "h" && n != "help" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		fmt.Printf("%s\t%s\t%s\n", *image, tag, strings.Join(names, ","))
		fmt.Fprintf(os.Stderr, "== %s %s: parsed %s, %d flags (+h,help); init-time registrations: %d on flag.CommandLine, %d on pflag.CommandLine; json log format linked: %v; %d packages\n",
			*image, tag, in.parsed, len(res), initGo, initPflag, in.jsonOK, len(order))
		for _, w := range in.warns {
			fmt.Fprintln(os.Stderr, "  "+w)
		}
		if *verbose {
			var ks []string
			for n, o := range res {
				ks = append(ks, fmt.Sprintf("    %-40s %s %s", n, o.pos, o.note))
			}
			sort.Strings(ks)
			fmt.Fprintln(os.Stderr, strings.Join(ks, "\n"))
			for s, m := range in.sets {
				if s != in.parsed {
					var ns []string
					for n := range m {
						ns = append(ns, n)
					}
					sort.Strings(ns)
					fmt.Fprintf(os.Stderr, "  other flag set %s: %s\n", s, strings.Join(ns, ","))
				}
			}
		}
		// prune AST cache to blobs used by this tag
		for id := range astCache {
			if !l.used[id] {
				delete(astCache, id)
			}
		}
	}
	repo.in.Close()
	repo.cmd.Wait()
}

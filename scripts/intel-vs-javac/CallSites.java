// Call sites resolved by javac (type attribution), for scripts/intel-vs-javac.py.
//
// usage: java CallSites.java ROOT SOURCE_DIR...
//
// Attributes every .java file under the SOURCE_DIRs (paths printed relative to ROOT) and prints
// one line per call whose target is declared in those sources:
//   <call path> TAB <call line> TAB <target path> TAB <target line>
// A method call's target is the method; `new Foo(...)` targets the class `Foo` (codesearch
// resolves a constructor call to its class). `this(...)`/`super(...)` and method references are
// left out. Missing dependencies leave some calls unresolved; those are left out too.
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;
import javax.lang.model.element.*;
import javax.tools.*;

public class CallSites {
    public static void main(String[] args) throws Exception {
        Path root = Paths.get(args[0]).toAbsolutePath().normalize();
        List<Path> files = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            try (Stream<Path> s = Files.walk(Paths.get(args[i]))) {
                s.filter(p -> p.toString().endsWith(".java")).forEach(files::add);
            }
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null);
        List<String> options = List.of("-proc:none", "-XDshould-stop.ifError=FLOW",
                "-XDshould-stop.at=FLOW", "-Xmaxerrs", "100000");
        JavacTask task = (JavacTask) javac.getTask(null, fm, d -> {}, options, null,
                fm.getJavaFileObjectsFromPaths(files));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        Trees trees = Trees.instance(task);
        SourcePositions pos = trees.getSourcePositions();
        StringBuilder out = new StringBuilder();
        for (CompilationUnitTree cu : units) {
            String callPath = rel(root, cu);
            new TreePathScanner<Void, Void>() {
                void emit(Tree call, Element target) {
                    if (target == null) return;
                    TreePath decl = trees.getPath(target);
                    if (decl == null) return;
                    CompilationUnitTree dcu = decl.getCompilationUnit();
                    long targetLine = dcu.getLineMap().getLineNumber(
                            pos.getStartPosition(dcu, decl.getLeaf()));
                    long callLine = cu.getLineMap().getLineNumber(pos.getStartPosition(cu, call));
                    out.append(callPath).append('\t').append(callLine).append('\t')
                            .append(rel(root, dcu)).append('\t').append(targetLine).append('\n');
                }

                @Override
                public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
                    ExpressionTree select = t.getMethodSelect();
                    String name = select instanceof IdentifierTree id ? id.getName().toString() : "";
                    if (!name.equals("this") && !name.equals("super")) {
                        emit(t, trees.getElement(new TreePath(getCurrentPath(), select)));
                    }
                    return super.visitMethodInvocation(t, v);
                }

                @Override
                public Void visitNewClass(NewClassTree t, Void v) {
                    Element ctor = trees.getElement(getCurrentPath());
                    if (ctor != null && t.getClassBody() == null) {
                        emit(t, ctor.getEnclosingElement());
                    }
                    return super.visitNewClass(t, v);
                }
            }.scan(cu, null);
        }
        System.out.print(out);
    }

    static String rel(Path root, CompilationUnitTree cu) {
        return root.relativize(Paths.get(cu.getSourceFile().toUri()).normalize()).toString();
    }
}

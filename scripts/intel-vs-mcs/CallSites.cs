// Every call a C# assembly makes into its own methods, read from the IL the Mono C# compiler
// (mcs) wrote and from its debug symbols (.mdb), which map each instruction to a source line.
// Used by scripts/intel-vs-mcs.py; built and run with Debian's mono and Mono.Cecil 0.9.5.
//
//   mono CallSites.exe ASSEMBLY.dll
//
// prints, tab-separated:
//   M <path> <name> <line>   a method with a body: its name and its body's first line
//   T <path> <type name> <line>   a type, and the first line of any of its methods
//   C <call path> <call line> <kind> <path> <name> <line>
//                            a call (kind "call") or a `new` (kind "new": path, type name and
//                            line of the constructor, or of the type when it has none);
//                            `: base(…)` and `: this(…)` are neither
// Property and event accessors, operators and compiler-generated methods are left out as
// targets; calls made from lambdas and iterators are kept at the line that wrote them.
using System;
using System.Collections.Generic;
using System.Linq;
using Mono.Cecil;
using Mono.Cecil.Cil;
using Mono.Cecil.Mdb;

static class CallSites
{
    const int Hidden = 0xfeefee;

    static SequencePoint FirstPoint(MethodDefinition m)
    {
        if (!m.HasBody) return null;
        return m.Body.Instructions.Select(i => i.SequencePoint)
            .FirstOrDefault(p => p != null && p.StartLine != Hidden);
    }

    // The statement an instruction belongs to: the nearest sequence point at or before it.
    static SequencePoint PointOf(Instruction i)
    {
        for (; i != null; i = i.Previous)
            if (i.SequencePoint != null && i.SequencePoint.StartLine != Hidden) return i.SequencePoint;
        return null;
    }

    static bool Generated(string name) { return name.Contains("<"); }

    static bool Target(MethodDefinition m)
    {
        return !m.IsGetter && !m.IsSetter && !m.IsAddOn && !m.IsRemoveOn
            && !m.Name.StartsWith("op_") && !Generated(m.Name) && !Generated(m.DeclaringType.Name);
    }

    static string Short(string name)
    {
        // `IFoo.Bar` (an explicit interface implementation) is `Bar`; `List`1` is `List`.
        name = name.Substring(name.LastIndexOf('.') + 1);
        int tick = name.IndexOf('`');
        return tick < 0 ? name : name.Substring(0, tick);
    }

    static IEnumerable<TypeDefinition> AllTypes(IEnumerable<TypeDefinition> types)
    {
        foreach (var t in types)
        {
            yield return t;
            foreach (var n in AllTypes(t.NestedTypes)) yield return n;
        }
    }

    static void Main(string[] args)
    {
        var module = ModuleDefinition.ReadModule(args[0], new ReaderParameters
        {
            ReadSymbols = true,
            SymbolReaderProvider = new MdbReaderProvider(),
        });
        var types = AllTypes(module.Types).ToList();
        var typeLine = new Dictionary<TypeDefinition, SequencePoint>();
        foreach (var t in types)
        {
            var p = t.Methods.Select(FirstPoint).FirstOrDefault(x => x != null);
            if (p == null) continue;
            typeLine[t] = p;
            if (!Generated(t.Name))
                Console.WriteLine("T\t{0}\t{1}\t{2}", p.Document.Url, Short(t.Name), p.StartLine);
        }
        foreach (var t in types)
            foreach (var m in t.Methods)
            {
                var p = FirstPoint(m);
                if (p != null && Target(m) && !m.IsConstructor)
                    Console.WriteLine("M\t{0}\t{1}\t{2}", p.Document.Url, Short(m.Name), p.StartLine);
            }
        foreach (var t in types)
            foreach (var m in t.Methods)
            {
                if (!m.HasBody) continue;
                foreach (var i in m.Body.Instructions)
                {
                    if (i.OpCode != OpCodes.Call && i.OpCode != OpCodes.Callvirt && i.OpCode != OpCodes.Newobj)
                        continue;
                    var called = i.Operand as MethodReference;
                    if (called == null || called.DeclaringType.GetElementType().Scope != module) continue;
                    MethodDefinition target;
                    try { target = called.Resolve(); } catch (Exception) { continue; }
                    if (target == null || target.Module != module) continue;
                    var site = PointOf(i);
                    if (site == null) continue;
                    // A struct built in place (`var p = new Pos(x)`) is a `call` of its
                    // constructor; from the struct's own constructors that is `: this(…)`.
                    bool built = i.OpCode == OpCodes.Newobj || (target.IsConstructor
                        && target.DeclaringType.IsValueType
                        && !(m.IsConstructor && m.DeclaringType == target.DeclaringType));
                    if (built)
                    {
                        var type = target.DeclaringType;
                        if (Generated(type.Name)) continue;
                        var at = FirstPoint(target);
                        if (at == null && !typeLine.TryGetValue(type, out at)) continue;
                        Console.WriteLine("C\t{0}\t{1}\tnew\t{2}\t{3}\t{4}", site.Document.Url,
                            site.StartLine, at.Document.Url, Short(type.Name), at.StartLine);
                    }
                    else if (!target.IsConstructor && Target(target))
                    {
                        var at = FirstPoint(target);
                        if (at == null) continue; // abstract or interface: no body, no line
                        Console.WriteLine("C\t{0}\t{1}\tcall\t{2}\t{3}\t{4}", site.Document.Url,
                            site.StartLine, at.Document.Url, Short(target.Name), at.StartLine);
                    }
                }
            }
    }
}

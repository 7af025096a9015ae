# frozen_string_literal: true

# Loaded into every Ruby process of a test run (RUBYOPT="-r this file") by
# scripts/intel-vs-ruby.py: records each call of a method defined under INTEL_TRACE_ROOT made
# from a line under it, and the lines that ran, into INTEL_TRACE_OUT/<pid>.tsv at exit:
#   C <call path> <call line> <method path> <def line> <method name> <"new" when made by
#     Class#new, else "-">
#   L <path> <line that ran>
# The call site is the caller's frame as Ruby reports it, so a call through `send`, `super`
# or `Foo.new` is attributed to the line that wrote it.
require "coverage"

module IntelTrace
  ROOT = File.join(File.realpath(ENV.fetch("INTEL_TRACE_ROOT")), "")
  OUT = ENV.fetch("INTEL_TRACE_OUT")
  CALLS = {}

  Coverage.start(lines: true)

  TracePoint.new(:call) do |tp|
    path = tp.path
    next unless path.start_with?(ROOT)

    # [0] is the called method's frame, [1] its caller's (Class#new's for an initialize).
    frames = caller_locations(1, 2)
    site = frames && frames[1]
    next unless site

    site_path = site.absolute_path || site.path
    next unless site_path&.start_with?(ROOT)

    via_new = tp.method_id == :initialize && site.label == "new" ? "new" : "-"
    CALLS[[site_path, site.lineno, path, tp.lineno, tp.method_id, via_new]] = true
  end.enable

  at_exit do
    File.open(File.join(OUT, "#{Process.pid}.tsv"), "w") do |f|
      CALLS.each_key { |c| f.puts(["C", *c].join("\t")) }
      Coverage.result.each do |path, counts|
        next unless path.start_with?(ROOT)

        lines = counts.is_a?(Hash) ? counts[:lines] : counts
        lines&.each_with_index { |n, i| f.puts("L\t#{path}\t#{i + 1}") if n&.positive? }
      end
    end
  end
end

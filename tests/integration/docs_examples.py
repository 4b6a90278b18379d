#!/usr/bin/env python3
"""The shell examples of README.md and docs/*.md, as tests/integration/docs_examples.sh
runs them (the convention: docs/testing.md, "Docs that run"). Standard library only.

  docs_examples.py extract SRC OUT TAG TMPDIR
      checks the convention in every file and writes, per example block,
      OUT/NNN.sh (the commands, rewritten to run here) and one line of
      OUT/plan.tsv: NNN FILE:LINE ACTION ARGS (ACTION: run or skip; ARGS:
      key=value options, or the skip's reason); OUT/errors.txt lists each
      place that breaks the convention (the test fails on any)
  docs_examples.py check OUT/NNN LOG
      every expect REGEX of block NNN matches the block's output LOG (re.M);
      prints what is missing, exit 1 when something is
"""
import glob
import os
import re
import sys

EXAMPLE_LANGS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^(\s*)(```+)(.*)$")
DIRECTIVE = re.compile(r"^<!--\s*(run|skip|expect)\b\s*:?\s*(.*?)\s*-->\s*$")
RUN_KEYS = {"lab", "links", "timeout", "wait", "in"}


def doc_files(src):
    files = [os.path.join(src, "README.md")]
    files += sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    return files


def blocks(path, rel, errors):
    """(line, lang, body lines, directives) for each fenced block of the file"""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            d = DIRECTIVE.match(lines[i].strip())
            if d:
                # a directive must sit right above a fence (more directives between)
                j = i + 1
                while j < len(lines) and DIRECTIVE.match(lines[j].strip()):
                    j += 1
                if j >= len(lines) or not FENCE.match(lines[j]):
                    errors.append(f"{rel}:{i + 1}: '{lines[i].strip()}' is not right above a fenced block")
            i += 1
            continue
        indent, ticks, info = m.group(1), m.group(2), m.group(3).strip()
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*" + ticks + r"\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i >= len(lines):
            errors.append(f"{rel}:{start + 1}: fence never closed")
        lang = info.split()[0] if info else ""
        dirs = []
        j = start - 1
        while j >= 0:
            d = DIRECTIVE.match(lines[j].strip())
            if not d:
                break
            dirs.insert(0, (j + 1, d.group(1), d.group(2)))
            j -= 1
        out.append((start + 1, lang, body, dirs))
        i += 1
    return out


def parse_run(arg, where, errors):
    opts = {}
    for word in arg.split():
        if "=" not in word:
            errors.append(f"{where}: run option '{word}' is not KEY=VALUE")
            continue
        k, v = word.split("=", 1)
        if k not in RUN_KEYS:
            errors.append(f"{where}: unknown run option '{k}' (known: {', '.join(sorted(RUN_KEYS))})")
        elif k == "lab" and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", v):
            errors.append(f"{where}: lab name '{v}'")
        elif k == "in" and v not in ("a", "b"):
            errors.append(f"{where}: in={v}: a or b (the lab's namespace the block runs in)")
        elif k not in ("lab", "in") and not re.fullmatch(r"[0-9]+", v):
            errors.append(f"{where}: {k}={v} is not a number")
        else:
            opts[k] = v
    return opts


def commands(lang, body):
    """the lines to run: a console block's '$ ' lines (with their continuations)"""
    if lang != "console":
        return list(body)
    cmds, cont = [], False
    for line in body:
        if cont:
            cmds.append(line)
        elif line.startswith("$ "):
            cmds.append(line[2:])
        else:
            continue
        cont = line.rstrip().endswith("\\")
    return cmds


HOST = re.compile(r"^#\s*host\s+([AB])\b")


def hosts(cmds, lab, labname, tmpdir, base, where, errors):
    """a block written for two hosts ('# host B' and '# host A' lines, each
    starting that host's part): each part goes to its own script, BASE.X.sh,
    run in the lab's namespace X; every part but the last in the background,
    the next one starting once something listens there (a TCP listener or a
    bound UDP socket: a server); after the last part ends, the earlier parts'
    processes are stopped (SIGINT), as one stops a server in its terminal.
    Returns the lines before the first part and the lines that run the parts"""
    marks = [i for i, c in enumerate(cmds) if HOST.match(c)]
    if not marks:
        return cmds, []
    if not lab:
        errors.append(f"{where}: '# host X' parts need run: lab=NAME")
        return cmds, []
    parts = []
    for k, i in enumerate(marks):
        end = marks[k + 1] if k + 1 < len(marks) else len(cmds)
        parts.append((HOST.match(cmds[i]).group(1).lower(), cmds[i:end]))
    if len({x for x, _ in parts}) != len(parts):
        errors.append(f"{where}: each host's part once")
    out = []
    for k, (x, body) in enumerate(parts):
        ns = f"{labname}-{x}"
        with open(f"{base}.{x}.sh", "w") as f:
            f.write("set -e -o pipefail\n" + rewrite("\n".join(body), lab, labname, tmpdir) + "\n")
        if k + 1 < len(parts):
            out += [f"ip netns exec {ns} bash {base}.{x}.sh &", f"_dx_listens {ns}"]
        else:
            out += [f"ip netns exec {ns} bash {base}.{x}.sh"]
    out += [f"_dx_stop {labname}-{x}" for x, _ in parts[:-1]]
    return cmds[:marks[0]], out


def rewrite(text, lab, labname, tmpdir):
    """the block's text as it runs here: its lab's names mapped, /tmp/ private"""
    if lab:
        text = re.sub(r"(?<![\w.-])" + re.escape(lab) + r"-([ab])(?![\w.-])", labname + r"-\1", text)
        text = re.sub(r"(--name\s+)" + re.escape(lab) + r"(?![\w.-])", r"\g<1>" + labname, text)
    text = re.sub(r"(?<![\w.~/-])/tmp/", tmpdir.rstrip("/") + "/", text)
    return text


def extract(src, out, tag, tmpdir):
    os.makedirs(out, exist_ok=True)
    errors, plan = [], []
    n = 0
    for path in doc_files(src):
        rel = os.path.relpath(path, src)
        for line, lang, body, dirs in blocks(path, rel, errors):
            where = f"{rel}:{line}"
            if not lang:
                errors.append(f"{where}: a fence without a language: name it (sh/console for examples, "
                              "text for output, synopses and pictures)")
                continue
            if lang not in EXAMPLE_LANGS:
                if dirs:
                    errors.append(f"{where}: run/skip/expect above a '{lang}' block (only sh, bash, shell, console run)")
                continue
            kinds = [k for _, k, _ in dirs]
            if kinds.count("run") + kinds.count("skip") != 1:
                errors.append(f"{where}: a '{lang}' example needs exactly one <!-- run: ... --> or "
                              "<!-- skip: REASON --> right above it (docs/testing.md, \"Docs that run\")")
                continue
            n += 1
            nid = f"{n:03d}"
            expects = [a for _, k, a in dirs if k == "expect"]
            for e in expects:
                try:
                    re.compile(e)
                except re.error as ex:
                    errors.append(f"{where}: expect '{e}': {ex}")
            if "skip" in kinds:
                reason = [a for _, k, a in dirs if k == "skip"][0]
                if not reason:
                    errors.append(f"{where}: skip without a reason")
                if expects:
                    errors.append(f"{where}: expect on a skipped block")
                plan.append(f"{nid}\t{where}\tskip\t{reason}")
                continue
            opts = parse_run([a for _, k, a in dirs if k == "run"][0], where, errors)
            lab = opts.get("lab", "")
            labname = f"dxl{n:02d}{tag}"[:12] if lab else ""
            cmds = commands(lang, body)
            if not any(c.strip() and not c.strip().startswith("#") for c in cmds):
                errors.append(f"{where}: nothing to run")
                continue
            cmds, parts = hosts(cmds, lab, labname, tmpdir, os.path.abspath(os.path.join(out, nid)), where, errors)
            text = rewrite("\n".join(cmds), lab, labname, tmpdir) + "".join("\n" + p for p in parts)
            makes_lab = bool(lab) and re.search(r"netns-lab\s+up\b.*--name\s+" + re.escape(labname), text)
            if "in" in opts and (not lab or makes_lab):
                errors.append(f"{where}: in={opts['in']} needs lab=NAME and a block that does not make the lab itself")
            with open(os.path.join(out, nid + ".sh"), "w") as f:
                f.write(f"# {where}\n{text}\n")
            with open(os.path.join(out, nid + ".expect"), "w") as f:
                f.write("".join(e + "\n" for e in expects))
            args = [f"{k}={v}" for k, v in sorted(opts.items()) if k not in ("lab", "in")]
            if lab:
                args += [f"lab={labname}", f"labup={'block' if makes_lab else 'runner'}"]
                if "in" in opts:
                    args.append(f"in={labname}-{opts['in']}")
            plan.append(f"{nid}\t{where}\trun\t{' '.join(args)}")
    with open(os.path.join(out, "plan.tsv"), "w") as f:
        f.write("".join(p + "\n" for p in plan))
    with open(os.path.join(out, "errors.txt"), "w") as f:
        f.write("".join(e + "\n" for e in errors))
    return 0


def check(base, log):
    out = open(log, encoding="utf-8", errors="replace").read()
    missing = [e for e in open(base + ".expect").read().split("\n") if e and not re.search(e, out, re.M)]
    for e in missing:
        print(f"expected output not seen: /{e}/")
    return 1 if missing else 0


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "extract":
        sys.exit(extract(*sys.argv[2:]))
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    sys.exit(__doc__)

#!/usr/bin/env python3
"""Runs the marked shell blocks of README.md and of every docs/*.md page and checks what they print. Started by
readme.sh (see there) as `readme.py README.md docs/*.md`.

Each file runs in a world of its own: a fresh copy of the reader's checkout (the configuration on this run's
ports, the development PKI, an empty registry) and, when a block asks for it, its own `make run`, stopped when the
file is done. So a page whose examples lean on another page's state (devices, ids, keys) fails here, as it would
for a reader who opened that page first. The private PostgreSQL, tinyproxy, webhook receiver and
/etc/pushprovider are shared (one page uses each).

A fenced block is marked by the HTML comment on the line before it (invisible on GitHub):

  <!-- readme.sh: run [config=NAME] [after="make run"] -->
      A console transcript. `$ ` starts a command (a trailing backslash continues it); `# ` lines are
      comments; any other line is expected output: each must match a line of the command's output
      (stdout and stderr together, as a terminal shows them), in order, where `…` stands for any text.
      A command must exit 0 unless the next command is `echo $?`, whose output then says the status.
      A command ending in `&` runs in the background: its expected lines are waited for (60 s) in its output.
      The block runs in one bash process (variables carry from command to command); background commands
      still running at its end get SIGTERM. `config=NAME` runs it with PUSHCTL_CONFIG naming that
      configuration; `after="make run"` first starts `make run` (once) and waits for its banner.
  <!-- readme.sh: config NAME -->
      A JSON fragment of a configuration: merged into a copy of Config/pushctl.json as configuration NAME.
  <!-- readme.sh: crontab -->
      Crontab lines: each entry's command runs (schedule dropped, `\\%` read as `%` as cron does) and must exit 0.
  <!-- readme.sh: synopsis -->
      Usage lines: every `pushctl <command> [<subcommand>]` they name must be run by some `run` block.
  <!-- readme.sh: skip REASON -->
      Not run, for the reason given (real Apple endpoints, systemd, …).

Every fenced block of a docs/*.md page, and of README.md's Quick start, must carry one of these markers; each
section named in SECTIONS must hold a block that runs.

Commands run as printed, with these stand-ins for the hosts and files a reader has and this machine lacks:
/etc/pushprovider/ is a directory of the run (holding the files the README says are there), db.internal:5432
the private PostgreSQL, proxy.internal:3128 the private tinyproxy, backend.internal:8081 the local webhook
receiver, 127.0.0.1:8080 and 2197 the ports `make run` got, and `<printed key>` the key its banner printed.
"""
import glob
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

# Sections (a heading, matched by its start) that must hold a block that runs: what README.md's "CLI" (its
# subsections) and the other sections this script covered before the reference moved to docs/.
SECTIONS = ["Quick start", "Payloads", "Certificates", "Sending", "The token registry", "Broadcasts",
            "Live Activities", "Scheduled sends", "Audiences", "Delivery history", "The simulator", "HTTP API",
            "PostgreSQL", "Scaling out", "Outbound proxy", "Feedback webhook", "Cron broadcasts"]
# README.md is covered in these sections only (the rest of it are tables and links); a docs page entirely.
README_COVERED = ["Quick start"]
MARKER = re.compile(r"^\s*<!-- readme\.sh: (run|config|crontab|synopsis|skip)\b(.*?)-->\s*$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Failure(Exception):
    pass


class Block:
    def __init__(self, kind, args, lang, lines, line_no, section, file="README.md"):
        self.kind, self.args, self.lang, self.lines, self.line_no, self.section = kind, args, lang, lines, line_no, section
        self.file = file

    def where(self):
        return f"{self.file}:{self.line_no} ({self.section})"


def parse_readme(path):
    """The fenced blocks of a page with their markers and the section (its deepest heading, #, ## or ###) each
    is in. A docs page is covered whole: every block must be marked; README.md in README_COVERED only."""
    blocks, unmarked = [], []
    name = os.path.relpath(path)
    whole = name != "README.md"
    lines = open(path, encoding="utf-8").read().split("\n")
    section_path, i = {}, 0
    marker = None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(#{1,3}) (.*)$", line)
        if m:
            level = len(m.group(1))
            section_path[level] = m.group(2).strip()
            for deeper in range(level + 1, 4):
                section_path.pop(deeper, None)
        mm = MARKER.match(line)
        if mm:
            marker = (mm.group(1), mm.group(2).strip(), i + 1)
            i += 1
            continue
        fence = re.match(r"^(\s*)```(\w*)\s*$", line)
        if fence:
            indent, lang = fence.group(1), fence.group(2)
            body, j = [], i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
                j += 1
            deepest = next((section_path[k] for k in (3, 2, 1) if k in section_path), "")
            section = next((c for c in SECTIONS if deepest.startswith(c)), None)
            covered = whole or any(section_path.get(k, "").startswith(c) for k in (1, 2, 3) for c in README_COVERED)
            if marker and marker[2] == i:
                blocks.append(Block(marker[0], marker[1], lang, body, i + 1, section or deepest, name))
            elif covered:
                unmarked.append(f"{name}:{i + 1} ({deepest})")
            marker = None
            i = j + 1
            continue
        if line.strip():
            marker = None if not MARKER.match(line) else marker
        i += 1
    return blocks, unmarked


def parse_args(text):
    out = {}
    for part in shlex.split(text):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def transcript(lines):
    """[[command, [expected lines]]] of a console block."""
    steps, command = [], None
    for line in lines:
        if command is not None and command.endswith("\\"):
            command += "\n" + line
            steps[-1][0] = command
            continue
        if line.startswith("$ "):
            command = line[2:]
            steps.append([command, []])
            continue
        if not steps or line.startswith("# ") or not line.strip():
            continue
        steps[-1][1].append(line)
    return steps


def pattern(expected):
    parts = [re.escape(p) for p in expected.split("…")]
    return re.compile("^" + ".*".join(parts) + "$")


def match_in_order(expected, *outputs):
    """The first expected line that no output line matches, or None. Each expected line is looked for in each
    output (stdout, stderr) after that output's last match: the README shows both as a terminal does, and their
    lines interleave differently from run to run, but within each the order holds."""
    streams = [o.split("\n") for o in outputs]
    cursors = [0] * len(streams)
    for e in expected:
        p = pattern(e.rstrip())
        for i, lines in enumerate(streams):
            k = cursors[i]
            while k < len(lines) and not p.match(lines[k].rstrip()):
                k += 1
            if k < len(lines):
                cursors[i] = k + 1
                break
        else:
            return e
    return None


class Runner:
    def __init__(self, env):
        self.env = env  # T, REPO, BIN, WORK, ports
        self.subs = []
        self.configs = {}
        self.make_run = None
        self.key = None
        self.ran_commands = []
        self.results = []

    # --- the world -------------------------------------------------------------------------------------------
    def substitute(self, text):
        for a, b in self.subs:
            text = text.replace(a, b)
        return text

    def base_config(self):
        return json.load(open(os.path.join(self.env["WORK"], "Config", "pushctl.json")))

    def add_config(self, name, fragment_lines):
        text = self.substitute("\n".join(fragment_lines)).strip()
        if text.startswith('"'):
            text = "{" + text.rstrip(",") + "}"
        try:
            fragment = json.loads(text)
        except json.JSONDecodeError as e:
            raise Failure(f"the JSON is not valid: {e}")
        config = self.configs.get(name) or self.base_config()
        # A fragment naming one app's settings (`"myapp": {...}` or `"webhook": {...}`) goes into the example app.
        apps = config["apps"]
        for key, value in fragment.items():
            if key == "webhook":
                apps["example"][key] = value
            else:
                config[key] = value
        # Paths in the fragment are as printed (absolute, or against the config's directory).
        self.configs[name] = config
        path = os.path.join(self.env["WORK"], "Config", f"pushctl-{name}.json")
        with open(path, "w") as f:
            json.dump(config, f, indent=2)
        return path

    def config_path(self, name):
        if name not in self.configs:
            raise Failure(f"no configuration named {name} (a `config {name}` block must come first)")
        return os.path.join(self.env["WORK"], "Config", f"pushctl-{name}.json")

    def start_make_run(self):
        if self.make_run:
            return
        log = os.path.join(self.env["T"], f"make-run-{self.env['PAGE']}.log")
        config = os.path.join(self.env["WORK"], "Config", "pushctl.json")
        if self.env.get("NO_MAKE") or self.env.get("PAGE") != "README-md":
            # The real `make run` for README.md's Quick start (which documents it); for a docs page, whose readers
            # have it running already, its recipe: a `make run` per page would re-check the release build each time.
            why = "--no-make" if self.env.get("NO_MAKE") else f"{self.env.get('PAGE')}"
            print(f"readme.sh: {why}: `make run` replaced by its recipe (cert make-dev if missing, pushctl serve)")
            command = f"exec {shlex.quote(self.env['BIN'])} serve --config {shlex.quote(config)}"
        else:
            command = (f"exec make -C {shlex.quote(self.env['REPO'])} --no-print-directory run "
                       f"CONFIG={shlex.quote(config)} RELEASE={shlex.quote(self.env['BIN'])}")
        self.make_run = subprocess.Popen(["bash", "-c", command], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                                         cwd=self.env["WORK"], start_new_session=True)
        started = time.time()
        deadline = started + 1200
        while time.time() < deadline:
            text = open(log).read()
            m = re.search(r"App 'example' has no API keys configured; this run accepts a development send key:\n  (\S+)", text)
            if m and "Send it a notification" in text:
                self.key = m.group(1)
                self.subs.append(("<printed key>", self.key))
                if "make -C" in command:
                    # The binary was built before this stage: `make run` with nothing changed compiles nothing (it
                    # once recompiled dependencies on every start). The time is printed, not judged: a box's load.
                    print(f"readme.sh: `make run` was listening {time.time() - started:.1f} s after it started")
                    compiled = [l for l in text.splitlines() if "Compiling" in l or "swift build" in l]
                    if compiled:
                        raise Failure("`make run` built again with nothing changed:\n" + "\n".join(compiled[:5]))
                return
            if self.make_run.poll() is not None:
                raise Failure(f"`make run` ended ({self.make_run.returncode}) before its banner:\n{text[-2000:]}")
            time.sleep(0.2)
        raise Failure("`make run` printed no banner within 20 minutes")

    # --- blocks ----------------------------------------------------------------------------------------------
    def run_block(self, block):
        args = parse_args(block.args)
        if args.get("after") == "make run":
            self.start_make_run()
        env = dict(os.environ)
        env.update(self.env["SHELL_ENV"])
        if "config" in args:
            env["PUSHCTL_CONFIG"] = self.config_path(args["config"])
        steps = transcript(block.lines)
        if not steps:
            raise Failure("a run block with no `$ ` command")
        out_dir = os.path.join(self.env["T"], "blocks", f"{self.env['PAGE']}-{block.line_no}")
        os.makedirs(out_dir, exist_ok=True)
        script = ["set +e", "cd " + shlex.quote(self.env["WORK"])]
        for n, (command, _) in enumerate(steps):
            text = self.substitute(command)
            self.ran_commands.append(text)
            out = os.path.join(out_dir, f"{n}.out")
            err = os.path.join(out_dir, f"{n}.err")
            rc = os.path.join(out_dir, f"{n}.rc")
            if re.search(r"&\s*$", text) and not re.search(r"&&\s*$", text):
                # `exec`: `$!` is then the command's own pid, as in a reader's shell (not a subshell's).
                body = re.sub(r"&\s*$", "", text)
                script.append(f"{{ exec {body}\n}} > {shlex.quote(out)} 2> {shlex.quote(err)} &")
                script.append(f"echo bg > {shlex.quote(rc)}; sleep 0")
                script.append(f"__pp_wait {shlex.quote(out)} {n}")
            else:
                script.append(f"{{ {text}\n}} > {shlex.quote(out)} 2> {shlex.quote(err)}; __pp_rc=$?; echo $__pp_rc > {shlex.quote(rc)}; (exit $__pp_rc)")
        script.append("__pp_end")
        waits = {n: expected for n, (command, expected) in enumerate(steps)}
        prelude = [
            # Waits (60 s at most) until a background command's output holds its expected lines.
            "__pp_wait() { local i; for i in $(seq 600); do [ -e \"$1.ready\" ] && return 0; "
            f"python3 {shlex.quote(os.path.abspath(__file__))} --check \"$1\" {shlex.quote(out_dir)} \"$2\" && return 0; sleep 0.1; done; return 0; }}",
            "__pp_end() { local p; for p in $(jobs -p); do kill -TERM $p 2>/dev/null; done; wait; }",
        ]
        with open(os.path.join(out_dir, "expected.json"), "w") as f:
            json.dump({str(k): v for k, v in waits.items()}, f)
        path = os.path.join(out_dir, "block.sh")
        with open(path, "w") as f:
            f.write("\n".join(prelude + script) + "\n")
        proc = subprocess.run(["bash", path], env=env, cwd=self.env["WORK"], timeout=900)
        def read(name):
            path = os.path.join(out_dir, name)
            return open(path, errors="replace").read() if os.path.exists(path) else ""
        for n, (command, expected) in enumerate(steps):
            out_text, err_text = read(f"{n}.out"), read(f"{n}.err")
            rc_text = open(os.path.join(out_dir, f"{n}.rc")).read().strip() if os.path.exists(os.path.join(out_dir, f"{n}.rc")) else "?"
            shown = self.substitute(command)
            if command.strip() == "echo $?" and n > 0:
                shown = f"echo $? (the status of `{self.substitute(steps[n - 1][0])}`)"
            next_is_status = n + 1 < len(steps) and steps[n + 1][0].strip() == "echo $?"
            if rc_text not in ("0", "bg") and not next_is_status:
                raise Failure(f"`{shown}` exited {rc_text}; the README shows no other status:\n{indent((out_text + err_text)[-1500:])}")
            missing = match_in_order([self.substitute(e) for e in expected], out_text, err_text)
            if missing is not None:
                raise Failure(f"`{shown}` printed no line matching\n    {missing}\n  it printed (stdout, then stderr):\n"
                              f"{indent(out_text[-2000:])}\n    ---\n{indent(err_text[-1500:])}")

    def run_crontab(self, block):
        for line in block.lines:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split(None, 5)
            if len(fields) < 6:
                raise Failure(f"not a crontab entry: {line}")
            command = self.substitute(fields[5].replace("\\%", "%"))
            self.ran_commands.append(command)
            env = dict(os.environ)
            env.update(self.env["SHELL_ENV"])
            env.pop("PUSHCTL_CONFIG", None)
            proc = subprocess.run(["bash", "-c", command], env=env, cwd=self.env["WORK"], capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                raise Failure(f"cron line `{command}` exited {proc.returncode}:\n{indent(proc.stdout + proc.stderr)}")

    def check_synopsis(self, block, run_blocks_text):
        missing = []
        for line in block.lines:
            m = re.match(r"^\s*pushctl ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)", line)
            if not m:
                continue
            words = m.group(1).split()
            candidates = [" ".join(words), words[0]] if len(words) > 1 else [words[0]]
            name = candidates[0]
            if not re.search(r"(^|[\s;(|&`$])(\S*/)?pushctl " + re.escape(name) + r"\b", run_blocks_text, re.M):
                missing.append("pushctl " + name)
        if missing:
            raise Failure("no run block runs " + ", ".join(sorted(set(missing))))

    def finish(self):
        if self.make_run and self.make_run.poll() is None:
            os.killpg(self.make_run.pid, signal.SIGTERM)
            try:
                self.make_run.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.make_run.pid, signal.SIGKILL)


def indent(text):
    return "\n".join("    " + l for l in text.rstrip().split("\n"))


def check_background(out, out_dir, n):
    """readme.py --check OUT DIR N: exit 0 once a background command's output holds its expected lines."""
    expected = json.load(open(os.path.join(out_dir, "expected.json"))).get(str(n), [])
    err = out[:-4] + ".err"
    texts = [open(f, errors="replace").read() if os.path.exists(f) else "" for f in (out, err)]
    subs = json.load(open(os.path.join(os.path.dirname(os.path.dirname(out_dir)), "subs.json")))
    for a, b in subs:
        expected = [e.replace(a, b) for e in expected]
    return 0 if match_in_order(expected, *texts) is None else 1


class WebhookReceiver(BaseHTTPRequestHandler):
    """The backend's receiver for the Feedback webhook section: records each POST, answers 200."""
    record = None

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(WebhookReceiver.record, "a") as f:
            f.write(json.dumps({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body.decode()}) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


def slug(title):
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def broken_links(path):
    """Relative links of a page whose file or #anchor does not exist (pages moved between files must not rot)."""
    def anchors(md):
        found, code = set(), False
        for line in open(md, encoding="utf-8"):
            if line.lstrip().startswith("```"):
                code = not code
            m = None if code else re.match(r"^#{1,6} (.*)$", line)
            if m:
                found.add(slug(m.group(1)))
        return found
    text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(resolved):
            broken.append(f"{os.path.relpath(path)}: ({target}): no file {os.path.relpath(resolved)}")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            broken.append(f"{os.path.relpath(path)}: ({target}): no heading #{anchor} in {os.path.relpath(resolved)}")
    return broken


def page_world(env, path):
    """The environment of one file's world: a fresh copy of the template checkout readme.sh made (WORK), named
    after the file, with PUSHCTL_CONFIG pointing into it."""
    page = re.sub(r"[^A-Za-z0-9]+", "-", os.path.relpath(path)).strip("-")
    work = os.path.join(env["T"], "pages", page)
    shutil.copytree(env["WORK"], work, symlinks=True)
    world = dict(env, WORK=work, PAGE=page)
    world["SHELL_ENV"] = dict(env["SHELL_ENV"], PUSHCTL_CONFIG=os.path.join(work, "Config", "pushctl.json"))
    return world


def lint(files):
    """What the full run reports only at its end, in a second: a block without a marker, a link to nowhere
    (make test runs this first, so a page's slip fails the build in its first minute, not its last)."""
    problems = [u for path in files for u in parse_readme(path)[1]]
    problems = ["block without a readme.sh marker: " + u for u in problems]
    problems += ["link to nowhere: " + b for path in files for b in broken_links(path)]
    for p in problems:
        print("readme.sh: " + p, file=sys.stderr)
    print(f"readme.sh: {len(files)} files linted, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        sys.exit(check_background(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) > 1 and sys.argv[1] == "--lint":
        sys.exit(lint(sys.argv[2:]))
    files = sys.argv[1:]
    env = json.loads(os.environ["README_ENV"])
    WebhookReceiver.record = env["WEBHOOK_RECORD"]
    hook = HTTPServer(("127.0.0.1", int(env["HOOK_PORT"])), WebhookReceiver)
    threading.Thread(target=hook.serve_forever, daemon=True).start()

    parsed = [(path, *parse_readme(path)) for path in files]
    failures = []
    unmarked = [u for _, _, us in parsed for u in us]
    if unmarked:
        failures.append("blocks without a readme.sh marker: " + ", ".join(unmarked))
    links = [b for path in files for b in broken_links(path)]
    if links:
        failures.append("links to nowhere: " + "; ".join(links))
    covered = {}
    subs = [tuple(p) for p in env["SUBS"]]
    substitute = Runner(env)
    substitute.subs = subs
    run_text = "\n".join(substitute.substitute(c) for _, bs, _ in parsed for b in bs if b.kind == "run"
                         for c, _ in transcript(b.lines))
    run_text += "\n" + "\n".join(l for _, bs, _ in parsed for b in bs if b.kind == "crontab" for l in b.lines)
    # `make run` is `pushctl serve` (its recipe; --no-make runs exactly that).
    if any(parse_args(b.args).get("after") == "make run" for _, bs, _ in parsed for b in bs if b.kind == "run"):
        run_text += "\npushctl serve --config Config/pushctl.json"
    passed = failed = skipped = 0
    try:
        for path, blocks, _ in parsed:
            if not blocks:
                continue
            runner = Runner(page_world(env, path))
            runner.subs = list(subs)
            print(f"readme.sh: --- {os.path.relpath(path)}: {len(blocks)} blocks, a fresh checkout in {runner.env['WORK']}")
            try:
                for block in blocks:
                    if block.section in SECTIONS:
                        covered.setdefault(block.section, []).append(block.kind)
                    label = f"{block.where()} [{block.kind}{(' ' + block.args) if block.args else ''}]"
                    with open(os.path.join(env["T"], "subs.json"), "w") as f:
                        json.dump(runner.subs, f)
                    try:
                        if block.kind == "run":
                            runner.run_block(block)
                        elif block.kind == "config":
                            runner.add_config(block.args, block.lines)
                        elif block.kind == "crontab":
                            runner.run_crontab(block)
                        elif block.kind == "synopsis":
                            runner.check_synopsis(block, run_text)
                        elif block.kind == "skip":
                            if not block.args:
                                raise Failure("a skipped block must say why")
                            print(f"readme.sh: skipped {block.where()}: {block.args}")
                            skipped += 1
                            continue
                        print(f"readme.sh: ok   {label}")
                        passed += 1
                    except Failure as e:
                        print(f"readme.sh: FAIL {label}\n  {e}")
                        failures.append(f"{block.where()}: {str(e).splitlines()[0]}")
                        failed += 1
                    except subprocess.TimeoutExpired as e:
                        print(f"readme.sh: FAIL {label}\n  timed out: {e}")
                        failures.append(f"{block.where()}: timed out")
                        failed += 1
            finally:
                runner.finish()
    finally:
        hook.shutdown()
    every_page = {os.path.relpath(f) for f in ["README.md"] + glob.glob("docs/*.md")} <= {os.path.relpath(f) for f in files}
    if not every_page:
        print("readme.sh: a subset of the pages: the check that every section in SECTIONS runs a block is not made")
    if every_page:
        # README.md is the front door: every page is reachable from it.
        readme = open("README.md", encoding="utf-8").read()
        for page in sorted(glob.glob("docs/*.md")):
            if not re.search(r"\]\(" + re.escape(page) + r"[#)]", readme):
                failures.append(f"README.md does not link {page}")
    for section in SECTIONS if every_page else []:
        kinds = covered.get(section, [])
        if not any(k in ("run", "crontab") for k in kinds):
            failures.append(f"section {section}: no block runs")
    for f in failures:
        print("readme.sh: " + f)
    print(f"readme: {len(files)} files, {passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

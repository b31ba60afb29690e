"""Many short documents per machine-made kind for tests/data/text/ (issue #12): one file each,
split between FIT and HELD_OUT by sorted name, so a kind's held-out median is not one document's.

Read by build_text_corpus.py; tests/data/SOURCES.md lists every document with its licence.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sysconfig
import tarfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

SITE = Path(sysconfig.get_paths()["purelib"])
DOC_CHARS = 4_000
"""Longest document; one with line ends is cut at the last line end after MIN_DOC_CHARS."""
MIN_DOC_CHARS = 3_000
PERMISSIVE = ("MIT", "ISC", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0")
PACKS = {
    "ajv@8.17.1": "MIT",
    "axios@1.7.7": "MIT",
    "body-parser@1.20.3": "MIT",
    "bootstrap@3.4.1": "MIT",
    "bootstrap@5.3.3": "MIT",
    "bootstrap-icons@1.11.3": "MIT",
    "bulma@1.0.2": "MIT",
    "chalk@5.3.0": "MIT",
    "chart.js@4.6.1": "MIT",
    "commander@12.1.0": "MIT",
    "cors@2.8.5": "MIT",
    "d3@7.9.0": "ISC",
    "debug@4.3.7": "MIT",
    "dotenv@16.4.5": "BSD-2-Clause",
    "emojilib@4.0.3": "MIT",
    "express@4.21.0": "MIT",
    "@fortawesome/fontawesome-free@6.6.0": "MIT",  # MIT for the CSS; fonts, icons not used
    "foundation-sites@6.8.1": "MIT",
    "glob@10.4.5": "ISC",
    "@highlightjs/cdn-assets@11.12.0": "BSD-3-Clause",
    "jquery@3.7.1": "MIT",
    "katex@0.19.1": "MIT",
    "lodash@4.17.21": "MIT",
    "materialize-css@1.0.0": "MIT",
    "mime-db@1.52.0": "MIT",
    "minimist@1.2.8": "MIT",
    "moment@2.30.1": "MIT",
    "morgan@1.10.0": "MIT",
    "@octokit/openapi@23.0.2": "MIT",
    "preact@10.24.3": "MIT",
    "purecss@3.0.0": "BSD-3-Clause",
    "qs@6.13.0": "BSD-3-Clause",
    "react-dom@18.3.1": "MIT",
    "semver@7.6.3": "ISC",
    "spectre.css@0.5.9": "MIT",
    "tachyons@4.12.0": "MIT",
    "timezones.json@1.7.2": "MIT",
    "uikit@3.25.29": "MIT",
    "underscore@1.13.7": "MIT",
    "unicode-emoji-json@0.9.0": "MIT",
    "uuid@10.0.0": "MIT",
    "vue@3.5.45": "MIT",
    "ws@8.18.0": "MIT",
    "yargs@17.7.2": "MIT",
}
"""npm packages (pinned) -> the licence of the files taken, checked against package.json."""


def cut(text: str, at: float) -> str:
    """About DOC_CHARS of ``text`` from ``at`` (a fraction of its length), starting after a line
    end and ending at one when the text has them nearby (minified text has none)."""
    start = int(len(text) * at)
    if start:
        line = text.find("\n", start, start + 400)
        start = line + 1 if line >= 0 else start
    window = text[start : start + DOC_CHARS]
    end = window.rfind("\n")
    return window[: end + 1] if end >= MIN_DOC_CHARS else window


@dataclass(frozen=True)
class Workspace:
    """A temp dir holding the npm packages, unpacked as ``<dir>/<name>-<version>/`` (scope
    dropped)."""

    dir: Path

    def pack(self, spec: str) -> Path:
        name, version = spec.rsplit("@", 1)
        return self.dir / f"{name.split('/')[-1]}-{version}"

    def file(self, spec: str, path: str) -> Path:
        return self.pack(spec) / path


def fetch_packs(dir: Path) -> Workspace:
    """``npm pack`` every PACKS entry into ``dir`` and unpack it, refusing a licence that is not
    the one listed or not permissive."""
    specs = sorted(PACKS)
    names = subprocess.run(
        ["npm", "pack", "--silent", "--pack-destination", str(dir), *specs],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    workspace = Workspace(dir)
    for spec, tgz in zip(specs, names, strict=True):
        target = workspace.pack(spec)
        target.mkdir()
        with tarfile.open(dir / tgz) as archive:
            archive.extractall(target, filter="data")
        for item in (target / "package").iterdir():
            item.rename(target / item.name)
        licence = json.loads((target / "package.json").read_text())["license"]
        if PACKS[spec] not in PERMISSIVE or PACKS[spec] not in licence:
            raise SystemExit(f"{spec}: licence {licence!r}, expected {PACKS[spec]}")
    return workspace


# ----------------------------------------------------------------------------- file regions
FILES: dict[str, tuple[str, str, float]] = {
    # stem: (npm spec, or "site" for the venv, or "/" for an absolute path; path; at)
    "minified_js.bootstrap-bundle": ("bootstrap@5.3.3", "dist/js/bootstrap.bundle.min.js", 0.2),
    "minified_js.bootstrap3": ("bootstrap@3.4.1", "dist/js/bootstrap.min.js", 0.5),
    "minified_js.jquery": ("jquery@3.7.1", "dist/jquery.min.js", 0.4),
    "minified_js.lodash": ("lodash@4.17.21", "lodash.min.js", 0.6),
    "minified_js.d3": ("d3@7.9.0", "dist/d3.min.js", 0.3),
    "minified_js.vue": ("vue@3.5.45", "dist/vue.global.prod.js", 0.7),
    "minified_js.chartjs": ("chart.js@4.6.1", "dist/chart.umd.min.js", 0.45),
    "minified_js.moment": ("moment@2.30.1", "min/moment.min.js", 0.25),
    "minified_js.axios": ("axios@1.7.7", "dist/axios.min.js", 0.55),
    "minified_js.preact": ("preact@10.24.3", "dist/preact.min.js", 0.1),
    "minified_js.react-dom": ("react-dom@18.3.1", "umd/react-dom.production.min.js", 0.35),
    "minified_js.underscore": ("underscore@1.13.7", "underscore-min.js", 0.65),
    "minified_js.katex": ("katex@0.19.1", "dist/katex.min.js", 0.15),
    "minified_js.uikit": ("uikit@3.25.29", "dist/js/uikit.min.js", 0.8),
    "minified_css.bootstrap": ("bootstrap@5.3.3", "dist/css/bootstrap.min.css", 0.3),
    "minified_css.bootstrap3": ("bootstrap@3.4.1", "dist/css/bootstrap.min.css", 0.6),
    "minified_css.bulma": ("bulma@1.0.2", "css/bulma.min.css", 0.45),
    "minified_css.fontawesome": ("@fortawesome/fontawesome-free@6.6.0", "css/all.min.css", 0.1),
    "minified_css.foundation": ("foundation-sites@6.8.1", "dist/css/foundation.min.css", 0.5),
    "minified_css.bootstrap-icons": (
        "bootstrap-icons@1.11.3",
        "font/bootstrap-icons.min.css",
        0.4,
    ),
    "minified_css.purecss": ("purecss@3.0.0", "build/pure-min.css", 0.2),
    "minified_css.tachyons": ("tachyons@4.12.0", "css/tachyons.min.css", 0.7),
    "minified_css.spectre": ("spectre.css@0.5.9", "dist/spectre.min.css", 0.35),
    "minified_css.materialize": ("materialize-css@1.0.0", "dist/css/materialize.min.css", 0.55),
    "minified_css.uikit": ("uikit@3.25.29", "dist/css/uikit.min.css", 0.25),
    "minified_css.katex": ("katex@0.19.1", "dist/katex.min.css", 0.5),
    "json.mime-db": ("mime-db@1.52.0", "db.json", 0.3),
    "json.octokit-openapi": ("@octokit/openapi@23.0.2", "generated/api.github.com.json", 0.4),
    "json.emojilib": ("emojilib@4.0.3", "dist/emoji-en-US.json", 0.5),
    "json.ajv-secure": ("ajv@8.17.1", "lib/refs/json-schema-secure.json", 0.0),
    "json.jsonschema-draft4": (
        "site",
        "jsonschema_specifications/schemas/draft4/metaschema.json",
        0,
    ),
    "en.express": ("express@4.21.0", "Readme.md", 0.1),
    "en.chalk": ("chalk@5.3.0", "readme.md", 0.1),
    "en.commander": ("commander@12.1.0", "Readme.md", 0.05),
    "en.yargs": ("yargs@17.7.2", "README.md", 0.2),
    "en.debug": ("debug@4.3.7", "README.md", 0.0),
    "en.ws": ("ws@8.18.0", "README.md", 0.0),
    "en.cors": ("cors@2.8.5", "README.md", 0.1),
    "en.morgan": ("morgan@1.10.0", "README.md", 0.0),
    "en.body-parser": ("body-parser@1.20.3", "README.md", 0.1),
    "en.semver": ("semver@7.6.3", "README.md", 0.3),
    "en.glob": ("glob@10.4.5", "README.md", 0.2),
    "en.dotenv": ("dotenv@16.4.5", "README.md", 0.15),
    "code_js.express-response": ("express@4.21.0", "lib/response.js", 0.3),
    "code_js.commander": ("commander@12.1.0", "lib/command.js", 0.4),
    "code_js.ws-websocket": ("ws@8.18.0", "lib/websocket.js", 0.2),
    "code_js.debug": ("debug@4.3.7", "src/common.js", 0.0),
    "code_js.axios": ("axios@1.7.7", "lib/core/Axios.js", 0.0),
    "code_js.yargs": ("yargs@17.7.2", "build/lib/yargs-factory.js", 0.5),
    "code_js.qs-parse": ("qs@6.13.0", "lib/parse.js", 0.1),
    "code_js.lodash": ("lodash@4.17.21", "lodash.js", 0.45),
    "code_js.moment": ("moment@2.30.1", "moment.js", 0.6),
    "code_js.glob": ("glob@10.4.5", "dist/commonjs/walker.js", 0.2),
    "code_js.jquery": ("jquery@3.7.1", "dist/jquery.js", 0.3),
    "code_py.anyio": ("site", "anyio/_backends/_asyncio.py", 0.3),
    "code_py.starlette": ("site", "starlette/routing.py", 0.4),
    "code_py.uvicorn": ("site", "uvicorn/protocols/http/h11_impl.py", 0.3),
    "code_py.attrs": ("site", "attr/_make.py", 0.5),
    "code_py.pydantic": ("site", "pydantic/main.py", 0.2),
    "code_py.requests": ("site", "requests/sessions.py", 0.35),
    "code_py.urllib3": ("site", "urllib3/connectionpool.py", 0.25),
    "code_py.h11": ("site", "h11/_connection.py", 0.4),
    "code_py.packaging": ("site", "packaging/specifiers.py", 0.3),
    "code_py.pluggy": ("site", "pluggy/_manager.py", 0.2),
    "code_py.pytest": ("site", "_pytest/python.py", 0.6),
    "code_c.js-native-api": ("/", "/usr/include/node/js_native_api.h", 0.2),
    "code_c.node-api": ("/", "/usr/include/node/node_api.h", 0.3),
    "code_c.uv": ("/", "/usr/include/node/uv.h", 0.4),
    "code_c.uv-unix": ("/", "/usr/include/node/uv/unix.h", 0.2),
    "code_c.brotli-encode": ("/", "/usr/include/brotli/encode.h", 0.3),
    "code_c.brotli-decode": ("/", "/usr/include/brotli/decode.h", 0.2),
    "code_c.expat": ("/", "/usr/include/expat.h", 0.4),
    "code_c.numpy-common": ("site", "numpy/_core/include/numpy/npy_common.h", 0.3),
    "code_c.numpy-ufunc": ("site", "numpy/_core/include/numpy/ufuncobject.h", 0.1),
    "code_c.numpy-ndarrayobject": ("site", "numpy/_core/include/numpy/ndarrayobject.h", 0.1),
    "code_c.cffi-parse": ("site", "cffi/parse_c_type.h", 0.0),
    "logs.mysql": ("/", "/var/log/mysql/error.log", 0.0),
    "logs.nats": ("/", "/var/log/nats-server.log", 0.0),
}


def path_of(workspace: Workspace, origin: str, path: str) -> Path:
    if origin == "site":
        return SITE / path
    return Path(path) if origin == "/" else workspace.file(origin, path)


def file_documents(workspace: Workspace) -> dict[str, str]:
    return {
        stem: cut(path_of(workspace, origin, path).read_text(encoding="utf-8"), at)
        for stem, (origin, path, at) in FILES.items()
    }


# ----------------------------------------------------------------------------- encoded bytes
BINARIES: dict[str, tuple[str, str, float, str]] = {
    # stem: (origin, path, at, style)
    "base64.bootstrap-icons-woff2": (
        "bootstrap-icons@1.11.3",
        "font/fonts/bootstrap-icons.woff2",
        0.3,
        "mime",
    ),
    "base64.katex-main-woff2": ("katex@0.19.1", "dist/fonts/KaTeX_Main-Regular.woff2", 0.2, "line"),
    "base64.katex-ams-ttf": ("katex@0.19.1", "dist/fonts/KaTeX_AMS-Regular.ttf", 0.4, "pem"),
    "base64.katex-math-woff": ("katex@0.19.1", "dist/fonts/KaTeX_Math-Italic.woff", 0.1, "datauri"),
    "base64.foundation-png": (
        "foundation-sites@6.8.1",
        "docs/assets/img/intro-grid.png",
        0.2,
        "mime",
    ),
    "base64.foundation-icons-png": (
        "foundation-sites@6.8.1",
        "docs/assets/img/icons/social.png",
        0.0,
        "urlsafe",
    ),
    "base64.pydantic-core-so": ("site", "pydantic_core/_pydantic_core.{so}", 0.3, "mime"),
    "base64.orjson-so": ("site", "orjson/orjson.{so}", 0.5, "line"),
    "base64.rpds-so": ("site", "rpds/rpds.{so}", 0.4, "pem"),
    "base64.xxhash-so": ("site", "xxhash/_xxhash.{so}", 0.2, "mime"),
    "base64.jiter-so": ("site", "jiter/jiter.{so}", 0.6, "urlsafe"),
}
BINARY_BYTES = 2_800
"""Bytes taken: their base64 is about DOC_CHARS characters with line ends."""
SO = sysconfig.get_config_var("EXT_SUFFIX").lstrip(".")


def encode(data: bytes, style: str) -> str:
    """base64 as tools print it: MIME (76 a line), PEM (64), one line, URL-safe, a data URI."""
    text = (base64.urlsafe_b64encode if style == "urlsafe" else base64.b64encode)(data).decode()
    if style == "datauri":
        return f"src: url(data:font/woff;base64,{text}) format('woff');\n"
    width = {"mime": 76, "pem": 64}.get(style)
    if width is None:
        return text + "\n"
    return "".join(text[i : i + width] + "\n" for i in range(0, len(text), width))


def binary_documents(workspace: Workspace) -> dict[str, str]:
    out = {}
    for stem, (origin, path, at, style) in BINARIES.items():
        data = path_of(workspace, origin, path.format(so=SO)).read_bytes()
        start = int(len(data) * at)
        out[stem] = encode(data[start : start + BINARY_BYTES], style)
    return out


# ----------------------------------------------------------------------------- command output
BASE = "38c1697"
"""The commit of this repository whose history the git commands show (pinned: HEAD moves)."""
NPM_FLAGS = "--registry=https://registry.npmjs.org/ --userconfig=/dev/null --no-audit --no-fund"
PIP_FLAGS = "--isolated --index-url https://pypi.org/simple --no-cache-dir"
COMMANDS: dict[str, tuple[str, ...]] = {
    # stem: commands, run in the workspace (packages under ./<name>-<version>/)
    "hex.sha256-bootstrap": ("sha256sum bootstrap-5.3.3/dist/js/* bootstrap-5.3.3/dist/css/*",),
    "hex.sha512-jquery": ("sha512sum jquery-3.7.1/dist/* jquery-3.7.1/src/*.js | head -24",),
    "hex.b2sum-katex": ("b2sum katex-0.19.1/dist/fonts/*.woff2 | head -24",),
    "hex.md5-node-headers": ("md5sum /usr/include/node/*.h /usr/include/node/uv/*.h",),
    "hex.sha1-lodash": ("sha1sum lodash-4.17.21/*.js | head -90",),
    "hex.xxd-woff2": (
        "xxd -s 4096 -l 880 bootstrap-icons-1.11.3/font/fonts/bootstrap-icons.woff2",
    ),
    "hex.hexdump-ttf": ("hexdump -C -s 8192 -n 736 katex-0.19.1/dist/fonts/KaTeX_Main-Bold.ttf",),
    "hex.od-png": (
        "od -A x -t x1z -v -j 256 -N 720 foundation-sites-6.8.1/docs/assets/img/docs-630.png",
    ),
    "hex.xxd-include": (
        "head -c 640 foundation-sites-6.8.1/docs/assets/img/icons/footer-icons.png | xxd -i",
    ),
    "hex.xxd-plain-tgz": ("xxd -p -s 1000 -l 1700 cors-2.8.5.tgz",),
    "hex.git-ls-tree": (f"git -C {{root}} ls-tree -r {BASE}~20 -- src tests/data | head -45",),
    "shell.tar-listing": ("tar tvzf bootstrap-5.3.3.tgz | head -45",),
    "shell.ls-recursive": ("ls -laR morgan-1.10.0 express-4.21.0 | head -70",),
    "shell.du-sort": ("du -ah --max-depth=3 katex-0.19.1 uikit-3.25.29 | sort -h | tail -110",),
    "shell.grep": ("grep -rn 'require(' express-4.21.0/lib body-parser-1.20.3/lib | head -60",),
    "shell.wc": (
        "wc -l commander-12.1.0/lib/*.js ws-8.18.0/lib/*.js yargs-17.7.2/build/lib/*.js"
        " express-4.21.0/lib/*.js lodash-4.17.21/a*.js lodash-4.17.21/is*.js | head -100",
    ),
    "shell.ruff": (
        f"ruff check --no-cache --select ALL --output-format=concise"
        f" {SITE}/idna/core.py 2>&1 | head -45",
    ),
    "shell.pip-show": (
        "pip show -f requests | head -70",
        "pip show -f httpx | head -40",
    ),
    "shell.dpkg-list": ("dpkg -l | head -55",),
    "shell.lscpu": ("lscpu", "free -h"),
    "shell.git-diff-stat": (f"git -C {{root}} diff --stat {BASE}~60 {BASE}~20 | tail -60",),
    "shell.pytest": (
        "cd {root} && python -m pytest -p no:cacheprovider -v tests/test_rules.py"
        " tests/test_model.py 2>&1 | tail -50",
    ),
    "shell.npm-ls-tree": (
        "npm ls --all --prefix install-a | head -70",
        "npm ls --all --prefix install-b | head -40",
    ),
    "json.pip-inspect": ("pip inspect 2>/dev/null | head -c 60000 | tail -c 4000",),
    "json.pip-list": ("pip list --format=json 2>/dev/null | head -c 3600",),
    "json.timezones-json-tool": (
        "python -m json.tool timezones.json-1.7.2/timezones.json | head -150",
    ),
    "json.unicode-emoji-compact": (
        "python -m json.tool --compact unicode-emoji-json-0.9.0/data-by-emoji.json | head -c 3600",
    ),
    "json.npm-ls": ("npm ls --all --json --prefix install-a | head -150",),
    "json.package-lock": ("head -c 120000 install-b/package-lock.json | tail -c 3600",),
    "json.npm-view": (f"npm view express@4.21.0 --json {NPM_FLAGS}",),
    "logs.pip-dry-run": tuple(
        f"pip install -v --dry-run --ignore-installed {PIP_FLAGS} {spec} 2>&1 | head -30"
        for spec in ("requests==2.32.3", "rich==13.9.4", "httpx==0.27.2")
    ),
    "logs.npm-ci": (f"cd install-b && npm ci --loglevel verbose {NPM_FLAGS} 2>&1 | head -60",),
    "logs.eipp": ("xzcat /var/log/apt/eipp.log.xz | head -c 40000 | tail -c 3500",),
    "logs.git-log-stat": (
        f"git -C {{root}} log --stat --format=fuller --skip=40 -n 8 {BASE} | head -90",
    ),
    "logs.node-trace-gc": (
        "node --trace-gc -e 'let a = []; for (let i = 0; i < 4e6; i++)"
        " a.push({i, s: String(i)}); console.log(a.length)' | head -40",
    ),
    "logs.python-verbose-import": ("python -v -c 'import json' 2>&1 | head -60",),
}
"""Documents made of command output. ``install-a``/``install-b`` are the npm installs that
INSTALLS makes first; their verbose output and log file are documents of their own."""
INSTALLS = {"install-a": "express@4.21.0", "install-b": "yargs@17.7.2 chalk@5.3.0"}


def run(commands: tuple[str, ...], cwd: Path, root: Path) -> str:
    """Each command's output after a ``$ command`` line, as a terminal transcript shows it."""
    parts = []
    for command in commands:
        command = command.replace("{root}", str(root))
        result = subprocess.run(
            command, shell=True, cwd=cwd, capture_output=True, text=True, check=False
        )
        parts.append(f"$ {command}\n{result.stdout}{result.stderr}")
    return cut("".join(parts), 0.0)


def npm_installs(workspace: Workspace) -> dict[str, str]:
    """Verbose ``npm install`` into fresh directories: its stderr (install-a) and its log file
    (install-b) are documents; the installed trees feed ``npm ls`` and package-lock.json."""
    out = {}
    for name, specs in INSTALLS.items():
        target = workspace.dir / name
        target.mkdir()
        logs = workspace.dir / f"{name}-logs"
        result = subprocess.run(
            f"npm install --loglevel verbose --cache {workspace.dir}/npm-cache"
            f" --logs-dir {logs} {NPM_FLAGS} {specs}",
            shell=True,
            cwd=target,
            capture_output=True,
            text=True,
            check=True,
        )
        if name == "install-a":
            out[f"logs.npm-install-{name}"] = cut(result.stderr, 0.0)
        else:
            log = next(logs.glob("*.log")).read_text(encoding="utf-8")
            out[f"logs.npm-debug-{name}"] = cut(log, 0.0)
    return out


def access_log(workspace: Workspace) -> dict[str, str]:
    """The access log of ``python -m http.server`` on 127.0.0.1 serving the packages, after
    requests for files that are there and files that are not."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        ["python", "-m", "http.server", "--bind", "127.0.0.1", str(port)],
        cwd=workspace.dir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.0)
        paths = sorted(str(p.relative_to(workspace.dir)) for p in workspace.dir.glob("*/*/*"))
        for path in [*paths[::9][:45], "favicon.ico", "robots.txt", "admin/", ".env"]:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=5).read()
            except OSError:
                pass  # a 404 is a line of the log like any other
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=10)
    return {"logs.http-server": cut(stderr, 0.0)}


def command_documents(workspace: Workspace, root: Path) -> dict[str, str]:
    out = npm_installs(workspace)
    out |= access_log(workspace)
    out |= {stem: run(commands, workspace.dir, root) for stem, commands in COMMANDS.items()}
    return out


def documents(workspace: Workspace, root: Path) -> dict[str, str]:
    """Every document, by file stem (``<kind>.<source>``)."""
    return (
        file_documents(workspace) | binary_documents(workspace) | command_documents(workspace, root)
    )


def split(docs: dict[str, str]) -> dict[str, dict[str, str]]:
    """Each kind's documents alternate between fit and held_out in sorted order, so each part
    gets half and no document is in both."""
    parts: dict[str, dict[str, str]] = {"fit": {}, "held_out": {}}
    seen: dict[str, int] = {}
    for stem in sorted(docs):
        kind = stem.split(".")[0]
        part = ("fit", "held_out")[seen.get(kind, 0) % 2]
        seen[kind] = seen.get(kind, 0) + 1
        parts[part][stem] = docs[stem]
    return parts

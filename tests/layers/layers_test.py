#!/usr/bin/env python3
"""The layers of README.md's table, enforced on the include graph.

Reads every #include of src/, properties/, fuzz/, tests/ and bench/ and
fails (exit 1, one line per offence) on:
  - an include of a layer that is not below the including layer
    (src/r3/LAYER/... may include only the layers LAYERS[LAYER] names);
  - an include of another layer's internal/ headers (a test of a layer,
    tests/LAYER/, may include its own layer's internal/);
  - a RapidCheck, GoogleTest or libFuzzer header in any layer, a CUDA or
    NCCL header outside r3/gpu, or one in an r3/gpu header that C++ code
    outside r3/gpu includes (CUDA types stay inside that folder and .cu
    files);
  - a folder under src/r3/ that the README's layer table does not list, or
    a table row for a folder that does not exist.
The static libraries of src/meson.build link the same way, but a link does
not catch an include of a header-only part, so this test is what holds.

  layers_test.py SOURCE_ROOT
  layers_test.py --self-test SOURCE_ROOT   # each kind of offence, seeded
                                           # into a copy, is reported
"""
import pathlib
import re
import sys

# What each layer may include besides itself (transitively closed below).
LAYERS = {
    'case': set(),
    'model': {'case'},
    'sut': {'case'},  # written independently of the model: never includes it
    'check': {'model', 'sut'},
    'sample': {'case'},
    'engine': {'sut'},
    'minimize': {'check'},
    'gpu': {'sut'},  # a producer: the check layer judges what it observes
}
FRONT_ENDS = ['src/cli', 'properties', 'fuzz', 'tests', 'bench']
# Headers of tools a layer must not know; gpu may use CUDA/NCCL.
FOREIGN = {
    'cuda': re.compile(r'^(cuda|cuda_runtime|cuda_runtime_api|nccl|cub/|thrust/)'),
    'tests': re.compile(r'^(rapidcheck|gtest/|gmock/|fuzzer/FuzzedDataProvider)'),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def closure(layer):
    seen, todo = set(), list(LAYERS[layer])
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(LAYERS[x])
    return seen


def readme_layers(root):
    """{folder: layer name} of the README's layer table rows that name one
    src/r3/ folder."""
    text = (root / 'README.md').read_text()
    rows = {}
    for line in text.splitlines():
        m = re.match(r'^\|\s*([a-z]+)\s*\|\s*`src/r3/([a-z_]+)/`\s*\|', line)
        if m:
            rows[m.group(2)] = m.group(1)
    return rows


def check(root):
    """The offences of the tree at root, one line each."""
    errors = []
    public_gpu = set()  # r3/gpu headers that code outside r3/gpu includes
    sources = [p for d in ['src'] + FRONT_ENDS[1:] for p in sorted((root / d).rglob('*'))
               if p.suffix in ('.h', '.cc', '.cu', '.cuh') and p.is_file()]
    for path in sources:
        rel = path.relative_to(root).as_posix()
        parts = rel.split('/')
        own = parts[2] if parts[:2] == ['src', 'r3'] and len(parts) > 3 else None
        tested = parts[1] if parts[0] == 'tests' and len(parts) > 2 else None
        text = path.read_text(errors='replace')
        for m in INCLUDE.finditer(text):
            lineno, inc = text.count('\n', 0, m.start()) + 1, m.group(1)
            where = '%s:%d: #include "%s"' % (rel, lineno, inc)
            target = inc.split('/')
            if target[0] == 'r3' and len(target) > 2:
                layer = target[1]
                if layer not in LAYERS:
                    errors.append('%s: no layer r3/%s in the table' % (where, layer))
                    continue
                if own is not None and layer != own and layer not in closure(own):
                    errors.append('%s: layer %s may not include %s (it may use: %s)' % (
                        where, own, layer, ', '.join(sorted(closure(own))) or 'nothing'))
                if 'internal' in target[2:-1] and layer != own and layer != tested:
                    errors.append('%s: %s/internal/ is private to its layer' % (where, layer))
            if own is not None:
                if FOREIGN['tests'].match(inc):
                    errors.append('%s: a layer knows no test or fuzz framework' % where)
                if FOREIGN['cuda'].match(inc) and own != 'gpu':
                    errors.append('%s: only r3/gpu names CUDA/NCCL' % where)
            if (target[0] == 'r3' and len(target) > 2 and target[1] == 'gpu' and own != 'gpu'
                    and path.suffix != '.cu'):  # a .cu front end (bench) is CUDA code itself
                public_gpu.add(inc)
    for inc in sorted(public_gpu):
        header = root / 'src' / inc
        for m in INCLUDE.finditer(header.read_text() if header.exists() else ''):
            if FOREIGN['cuda'].match(m.group(1)):
                errors.append('src/%s: included outside r3/gpu, so it may not include "%s"'
                              % (inc, m.group(1)))
    folders = {p.name for p in (root / 'src' / 'r3').iterdir() if p.is_dir()}
    table = readme_layers(root)
    for f in sorted(folders - set(table)):
        errors.append('README.md: the layer table has no row for src/r3/%s/' % f)
    for f in sorted(set(table) - folders):
        errors.append('README.md: the layer table names src/r3/%s/, which does not exist' % f)
    for f in sorted(folders - set(LAYERS)):
        errors.append('tests/layers/layers_test.py: LAYERS has no entry for src/r3/%s/' % f)
    return errors, len(sources)


# (file, text appended to it, the offence it must give)
SEEDED = [
    ('src/r3/sut/sut.cc', '#include "r3/model/layout.h"\n', 'layer sut may not include model'),
    ('src/r3/case/case.h', '#include "r3/check/verdict.h"\n', 'layer case may not include check'),
    ('src/r3/check/report.cc', '#include "r3/sut/internal/dispatch.h"\n',
     'sut/internal/ is private to its layer'),
    ('tests/check/report_test.cc', '#include "r3/sut/internal/dispatch.h"\n',
     'sut/internal/ is private to its layer'),
    ('src/r3/model/layout.cc', '#include <rapidcheck.h>\n', 'knows no test or fuzz framework'),
    ('src/r3/check/run_case.cc', '#include <cuda_runtime.h>\n', 'only r3/gpu names CUDA/NCCL'),
    ('src/r3/gpu/gpu.h', '#include <nccl.h>\n', 'may not include "nccl.h"'),
]


def self_test(root):
    import shutil
    import tempfile
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / 'tree'
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(
            '.git', 'build*', '.mutate', '.devdeps', 'corpus', '.engines-cache'))
        clean, _ = check(copy)
        if clean:
            print('self-test: the unchanged copy has offences: %s' % clean[0])
            return 1
        for rel, text, want in SEEDED + [('README.md', None, 'no row for src/r3/minimize/'),
                                         ('src/r3/newlayer/x.h', '', 'LAYERS has no entry')]:
            path = copy / rel
            old = path.read_text() if path.exists() else None
            if text is None:  # drop the minimize row of the layer table
                path.write_text(re.sub(r'^\| minimize \|.*\n', '', old, flags=re.M))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text((old or '') + text)
            got, _ = check(copy)
            ok = len(got) >= 1 and all(want in e for e in got if 'newlayer' not in rel) and \
                any(want in e for e in got)
            print('%s %s: %s' % ('ok  ' if ok else 'FAIL', rel, got[0] if got else 'no offence'))
            failures += not ok
            if old is None:
                path.unlink()
                path.parent.rmdir()
            else:
                path.write_text(old)
    return 1 if failures else 0


def main():
    if sys.argv[1] == '--self-test':
        return self_test(pathlib.Path(sys.argv[2]).resolve())
    errors, files = check(pathlib.Path(sys.argv[1]).resolve())
    for e in errors:
        print(e)
    if errors:
        print('layers_test: %d offence(s)' % len(errors))
        return 1
    print('layers_test: %d files, %d layers, no offence' % (files, len(LAYERS)))
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/python3
"""explain --svg and sizing --svg draw what the text reports say (issue 10).

Each picture must be well-formed SVG that rsvg-convert (Debian's librsvg2-bin)
renders to a PNG, and its parts must match the checked case: one bar per
gathered tensor, one line per rank (only the wrong ones past 64 ranks, with a
count), a wrong rank framed in red exactly when the text says WRONG, and one
curve per sizing policy with its safety as `sizing` prints it.

    tests/cli/svg_render_test.py R3CHECK OUTDIR
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NS = '{http://www.w3.org/2000/svg}'
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)


def r3check(*args, stdin=None):
    p = subprocess.run([R3CHECK] + list(args), cwd=ROOT, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def render(svg, png):
    p = subprocess.run(['rsvg-convert', '-o', png, svg], stderr=subprocess.PIPE, text=True)
    expect(p.returncode == 0, '%s: rsvg-convert exit %d: %s' % (svg, p.returncode, p.stderr))
    expect(os.path.exists(png) and os.path.getsize(png) > 1000, '%s: no PNG' % png)


def explain_picture(name, case_args, extra=()):
    svg = os.path.join(OUT, name + '.svg')
    status, text, err = r3check('explain', '--svg', svg, *extra, *case_args)
    expect(status in (0, 1), '%s: explain exit %d: %s' % (name, status, err))
    root = ET.parse(svg).getroot()
    render(svg, os.path.join(OUT, name + '.png'))
    return root, text, status


def groups(root, cls):
    return [g for g in root.iter(NS + 'g') if cls in g.get('class', '').split()]


def case_text(dp, tp, tokens, sp='auto', ep='on', dispatch='naive'):
    return ('r3case 1\ndp %d\ntp %d\nep %s\ndispatch %s\nsp %s\nmax_num_batched_tokens 64\n'
            'top_k 2\nnum_experts 8\nnum_layers 1\ntokens %s\n'
            % (dp, tp, ep, dispatch, sp, ' '.join(str(t) for t in tokens)))


def main():
    # The eager TP2/DP2 step: 4 ranks, all ok, one tensor with SP padding.
    root, text, status = explain_picture('eager', ['corpus/seeds/tp2-dp2-eager.r3case'])
    expect(status == 0, 'eager: exit %d' % status)
    expect(len(groups(root, 'rank')) == 4, 'eager: %d rank lines, want 4' % len(groups(root, 'rank')))
    expect(not groups(root, 'wrong'), 'eager: a rank drawn wrong under a PASS')
    expect(any(r.get('fill') == 'url(#pad)' for r in root.iter(NS + 'rect')),
           'eager: SP padding not hatched')

    # Under a seeded bug: exactly the ranks the text calls WRONG are red.
    root, text, status = explain_picture('eager-mutant', ['corpus/seeds/tp2-dp2-eager.r3case'],
                                         ['--mutant', 'shard-start-without-S'])
    wrong_text = len(re.findall(r'  WRONG$', text, re.M))
    expect(status == 1 and wrong_text > 0, 'mutant: text shows no WRONG rank')
    expect(len(groups(root, 'wrong')) == wrong_text,
           'mutant: %d red ranks, text says %d' % (len(groups(root, 'wrong')), wrong_text))

    # DP 64 (64 ranks): every rank drawn; DP 128 x TP 2 (256 ranks): summarised.
    with open(os.path.join(OUT, 'dp64.r3case'), 'w') as f:
        f.write(case_text(64, 1, [1] * 64))
    root, _, _ = explain_picture('dp64', [os.path.join(OUT, 'dp64.r3case')])
    expect(len(groups(root, 'rank')) == 64, 'dp64: %d rank lines' % len(groups(root, 'rank')))
    with open(os.path.join(OUT, 'dp128.r3case'), 'w') as f:
        f.write(case_text(128, 2, [1] * 128))
    root, _, _ = explain_picture('dp128', [os.path.join(OUT, 'dp128.r3case')],
                                 ['--mutant', 'no-sp-trim'])
    lines = groups(root, 'rank')
    expect(0 < len(lines) <= 64 and all('wrong' in g.get('class') for g in lines),
           'dp128: %d rank lines, not only wrong ones' % len(lines))
    summary = ' '.join(t.text or '' for t in root.iter(NS + 'text'))
    expect('256 ranks:' in summary, 'dp128: no summary of the ranks not drawn')

    # sizing --svg: one curve per policy, safety as the text report says.
    svg = os.path.join(OUT, 'sizing.svg')
    status, text, err = r3check('sizing', '--svg', svg, 'corpus/seeds/tp2-dp2-warmup.r3case')
    expect(status == 0, 'sizing: exit %d %s' % (status, err))
    root = ET.parse(svg).getroot()
    render(svg, os.path.join(OUT, 'sizing.png'))
    curves = [p for p in root.iter(NS + 'polyline') if p.get('class') == 'policy']
    policies = re.findall(r'^(\w+)\s+\d+\s+(yes|NO)\b', text, re.M)
    expect(len(curves) == len(policies) and len(curves) >= 3,
           'sizing: %d curves for %d policies' % (len(curves), len(policies)))
    legend = [t.text for t in root.iter(NS + 'text') if t.text and t.text.lower().endswith('safe)')]
    for name, safe in policies:
        want = '%s (%s)' % (name, 'safe' if safe == 'yes' else 'UNSAFE')
        expect(want in legend, 'sizing: legend lacks %r (has %r)' % (want, legend))

    print('svg pictures: %s (PNGs in %s)' % ('all checks passed' if not failures else
                                            '%d check(s) failed' % len(failures), OUT))
    return 1 if failures else 0


if __name__ == '__main__':
    R3CHECK, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(OUT, exist_ok=True)
    sys.exit(main())

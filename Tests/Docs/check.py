"""Checks the documentation against the repository, in about a second (deploy/test runs it first):

- every relative link and image in README.md and docs/*.md names a file that exists, and every #anchor a heading
  of that file (GitHub's heading ids);
- docs/settings.md lists every variable ServiceConfiguration.variables names;
- the import block of docs/architecture.md is exactly the `import` lines of each module and test target.

Run alone: python3 Tests/Docs/check.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Modules every target may import that are not the project's.
OUTSIDE = {'Foundation', 'Glibc', 'Synchronization', 'Testing', 'Dispatch', 'XCTest'}


def read(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as file:
        return file.read()


def without_code(text):
    """The text with fenced code blocks and inline code blanked, so only real links remain."""
    text = re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)
    return re.sub(r'`[^`\n]*`', '', text)


def anchors(path):
    """GitHub's ids for the headings of a Markdown file: lower case, punctuation dropped, spaces as hyphens."""
    seen = {}
    ids = set()
    for line in re.sub(r'^```.*?^```', '', read(path), flags=re.S | re.M).splitlines():
        match = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not match:
            continue
        slug = re.sub(r'[^\w\- ]', '', match.group(1).lower()).replace(' ', '-')
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        ids.add(slug if count == 0 else '%s-%d' % (slug, count))
    return ids


def check_links(problems):
    pages = ['README.md'] + sorted('docs/' + name for name in os.listdir(os.path.join(ROOT, 'docs')) if name.endswith('.md'))
    for page in pages:
        for target in re.findall(r'!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)', without_code(read(page))):
            if re.match(r'[a-z]+:', target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition('#')
            resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(os.path.join(ROOT, resolved)):
                problems.append('%s: %s: no such file' % (page, target))
            elif anchor and resolved.endswith('.md') and anchor not in anchors(resolved):
                problems.append('%s: %s: no heading #%s in %s' % (page, target, anchor, resolved))


def check_settings(problems):
    source = read('Sources/ReclaimAPI/ServiceConfiguration.swift')
    block = source[source.index('static let variables'):]
    block = block[:block.index('\n    ]\n')]
    names = re.findall(r'\("([A-Z][A-Z_]+)",', block)
    if not names:
        problems.append('ServiceConfiguration.variables: no names found (has its shape changed?)')
    settings = read('docs/settings.md')
    for name in names:
        if not re.search(r'^\|[^\n]*`%s`' % re.escape(name), settings, re.M):
            problems.append('docs/settings.md: no row for %s' % name)


def imports_of(directory):
    found = set()
    for folder, _, files in os.walk(os.path.join(ROOT, directory)):
        for name in files:
            if name.endswith('.swift'):
                with open(os.path.join(folder, name), encoding='utf-8') as file:
                    for match in re.finditer(r'^(?:@\w+\s+)*import\s+(\w+)', file.read(), re.M):
                        found.add(match.group(1))
    return found - OUTSIDE


def check_imports(problems):
    text = read('docs/architecture.md')
    marker = text.find('<!-- imports: checked by Tests/Docs/check.py')
    if marker < 0:
        problems.append('docs/architecture.md: the import block marker is gone')
        return
    block = re.search(r'```\n(.*?)```', text[marker:], re.S).group(1)
    documented = {}
    for line in block.strip().splitlines():
        name, _, targets = line.partition('→')
        targets = targets.strip()
        documented[name.strip()] = set() if targets.startswith('(') else {t.strip() for t in targets.split(',')}
    targets = {}
    for kind in ('Sources', 'Tests'):
        for name in sorted(os.listdir(os.path.join(ROOT, kind))):
            directory = os.path.join(kind, name)
            swift = any(f.endswith('.swift') for _, _, files in os.walk(os.path.join(ROOT, directory)) for f in files)
            if swift:
                targets[name] = imports_of(directory)
    for name, actual in targets.items():
        if name not in documented:
            problems.append('docs/architecture.md: no import line for %s (it imports %s)' % (name, ', '.join(sorted(actual)) or 'nothing'))
        elif documented[name] != actual:
            if actual - documented[name]:
                problems.append('docs/architecture.md: %s also imports %s' % (name, ', '.join(sorted(actual - documented[name]))))
            if documented[name] - actual:
                problems.append('docs/architecture.md: %s does not import %s' % (name, ', '.join(sorted(documented[name] - actual))))
    for name in documented.keys() - targets.keys():
        problems.append('docs/architecture.md: %s is not a Swift target' % name)


def main():
    problems = []
    check_links(problems)
    check_settings(problems)
    check_imports(problems)
    for problem in problems:
        print('docs: ' + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

#include "core/diagnosis/logprefix.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

// "YYYY-MM-DD HH:MM:SS" at the start of s; returns its length (with optional ",mmm"/".mmm") or 0.
qsizetype dateTimeLength(QByteArrayView s) {
    static constexpr char shape[] = "dddd-dd-dd dd:dd:dd";
    constexpr qsizetype len = sizeof(shape) - 1;
    if (s.size() < len)
        return 0;
    for (qsizetype i = 0; i < len; ++i) {
        const bool ok = shape[i] == 'd' ? isDigit(s[i]) : s[i] == shape[i];
        if (!ok)
            return 0;
    }
    qsizetype n = len;
    if (n < s.size() && (s[n] == ',' || s[n] == '.')) {
        qsizetype j = n + 1;
        while (j < s.size() && isDigit(s[j]))
            ++j;
        n = j > n + 1 ? j : n;
    }
    return n;
}

// vLLM's "LEVEL MM-DD HH:MM:SS" (both the new and the old format carry it).
bool startsWithVllmLevel(QByteArrayView s) {
    static const QByteArrayView levels[] = {"INFO ", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL "};
    for (QByteArrayView level : levels) {
        if (s.startsWith(level)) {
            const QByteArrayView rest = s.sliced(level.size());
            return rest.size() >= 14 && isDigit(rest[0]) && isDigit(rest[1]) && rest[2] == '-' &&
                   isDigit(rest[3]) && isDigit(rest[4]) && rest[5] == ' ' && rest[8] == ':';
        }
    }
    return false;
}

qsizetype skipSpaces(QByteArrayView s, qsizetype i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
        ++i;
    return i;
}

} // namespace

LogPrefix LogPrefix::parse(QByteArrayView line) {
    LogPrefix p = scan(line);
    p.source = p.sourceBytes.isEmpty() ? u"main"_s : QString::fromUtf8(p.sourceBytes).simplified();
    return p;
}

LogPrefix LogPrefix::scan(QByteArrayView line) {
    LogPrefix p;
    qsizetype i = skipSpaces(line, 0);
    // Wrappers insert tags such as "[Stage-1]" before the server's own prefix: skip up to three.
    for (int round = 0; round < 4 && i < line.size(); ++round) {
        const QByteArrayView rest = line.sliced(i);
        if (rest.front() == '(') {
            const qsizetype close = rest.indexOf(')');
            if (close > 1 && close < 120 && rest.first(close).contains("pid=")) {
                p.sourceBytes = rest.sliced(1, close - 1).trimmed();
                p.framework = Framework::VLLM;
                p.messageStart = skipSpaces(line, i + close + 1);
                return p;
            }
            break;
        }
        if (rest.front() == '[') {
            const qsizetype close = rest.indexOf(']');
            if (close < 0 || close > 120)
                break;
            const QByteArrayView inside = rest.sliced(1, close - 1);
            const qsizetype dt = dateTimeLength(inside);
            if (dt > 0) {
                const QByteArrayView who = inside.sliced(dt).trimmed();
                p.sourceBytes = who;
                p.framework = Framework::SGLang;
                p.messageStart = skipSpaces(line, i + close + 1);
                return p;
            }
            i = skipSpaces(line, i + close + 1); // a tag: look behind it
            continue;
        }
        if (startsWithVllmLevel(rest)) {
            p.framework = Framework::VLLM;
            p.messageStart = i;
            return p;
        }
        break;
    }
    p.messageStart = i;
    return p;
}

} // namespace moetune

// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/logprefix.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

bool matchesShape(QByteArrayView s, QByteArrayView shape) {
    if (s.size() < shape.size())
        return false;
    for (qsizetype i = 0; i < shape.size(); ++i) {
        if (shape[i] == 'd' ? !isDigit(s[i]) : s[i] != shape[i])
            return false;
    }
    return true;
}

// Optional ",mmm" / ".mmm" fraction after a time at s[n].
qsizetype withFraction(QByteArrayView s, qsizetype n) {
    if (n < s.size() && (s[n] == ',' || s[n] == '.')) {
        qsizetype j = n + 1;
        while (j < s.size() && isDigit(s[j]))
            ++j;
        n = j > n + 1 ? j : n;
    }
    return n;
}

// "YYYY-MM-DD HH:MM:SS" at the start of s; returns its length (with optional ",mmm"/".mmm") or 0.
qsizetype dateTimeLength(QByteArrayView s) {
    constexpr QByteArrayView shape = "dddd-dd-dd dd:dd:dd";
    return matchesShape(s, shape) ? withFraction(s, shape.size()) : 0;
}

// ISO 8601 "YYYY-MM-DDTHH:MM:SS[.fff][Z|+hh:mm]" at the start of s; its length or 0.
qsizetype isoLength(QByteArrayView s) {
    constexpr QByteArrayView shape = "dddd-dd-ddTdd:dd:dd";
    if (!matchesShape(s, shape))
        return 0;
    qsizetype n = withFraction(s, shape.size());
    if (n < s.size() && s[n] == 'Z')
        ++n;
    else if (n + 6 <= s.size() && (s[n] == '+' || s[n] == '-') && matchesShape(s.sliced(n + 1), "dd:dd"))
        n += 6;
    return n;
}

qsizetype skipSpaces(QByteArrayView s, qsizetype i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
        ++i;
    return i;
}

// vLLM's "LEVEL MM-DD HH:MM:SS" (both the new and the old format carry it); the level's length or 0.
qsizetype vllmLevelLength(QByteArrayView s) {
    static const QByteArrayView levels[] = {"INFO ", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL "};
    for (QByteArrayView level : levels) {
        if (s.startsWith(level) && matchesShape(s.sliced(level.size()), "dd-dd dd:dd:dd"))
            return level.size();
    }
    return 0;
}

// Python logging's default "LEVEL:logger.name:message"; the offset of the message or 0.
qsizetype pythonLoggingLength(QByteArrayView s, Framework *framework) {
    static const QByteArrayView levels[] = {"INFO:", "WARNING:", "ERROR:", "DEBUG:", "CRITICAL:"};
    for (QByteArrayView level : levels) {
        if (!s.startsWith(level))
            continue;
        const QByteArrayView rest = s.sliced(level.size());
        qsizetype j = 0;
        while (j < rest.size() && j < 120 && rest[j] != ':' && rest[j] != ' ')
            ++j;
        if (j == 0 || j >= rest.size() || rest[j] != ':')
            return 0;
        const QByteArrayView logger = rest.first(j);
        if (logger.startsWith("sglang"))
            *framework = Framework::SGLang;
        else if (logger.startsWith("vllm"))
            *framework = Framework::VLLM;
        return level.size() + j + 1;
    }
    return 0;
}

// Rust tracing's "LEVEL target::path: " after its timestamp; the offset of the message or 0.
qsizetype rustTracingLength(QByteArrayView s, Framework *framework) {
    static const QByteArrayView levels[] = {"TRACE ", "DEBUG ", "INFO ", "WARN ", "ERROR "};
    for (QByteArrayView level : levels) {
        if (!s.startsWith(level))
            continue;
        const qsizetype t = skipSpaces(s, level.size());
        qsizetype j = t;
        while (j < s.size() && j - t < 160 && s[j] != ' ')
            ++j;
        if (j == t || s[j - 1] != ':')
            return 0;
        const QByteArrayView target = s.sliced(t, j - t);
        if (target.contains("sgl"))
            *framework = Framework::SGLang;
        else if (target.contains("vllm"))
            *framework = Framework::VLLM;
        return skipSpaces(s, j);
    }
    return 0;
}

// "TP7", "DP0 TP7", "DP1 TP3 EP3": a rank name.
bool isRankName(QByteArrayView s) {
    qsizetype i = 0;
    int parts = 0;
    while (i < s.size()) {
        if (parts > 0) {
            if (s[i] != ' ')
                return false;
            ++i;
        }
        if (i + 2 >= s.size() || !(s[i] >= 'A' && s[i] <= 'Z') || !(s[i + 1] >= 'A' && s[i + 1] <= 'Z'))
            return false;
        i += 2;
        const qsizetype digits = i;
        while (i < s.size() && isDigit(s[i]))
            ++i;
        if (i == digits)
            return false;
        ++parts;
    }
    return parts > 0 && parts <= 4;
}

// Where a glued prefix starts ("...100%|####| 8/8 [00:05<00:00][2026-..." or "...(Worker pid=3) ..."),
// or -1: only a prefix the line's first 512 bytes hold.
qsizetype gluedPrefixAt(QByteArrayView s) {
    const qsizetype limit = std::min<qsizetype>(s.size(), 512);
    for (qsizetype i = 1; i < limit; ++i) {
        if (s[i] == '[' && dateTimeLength(s.sliced(i + 1)) > 0)
            return i;
        if (s[i] == '(') {
            const qsizetype close = s.sliced(i).indexOf(')');
            if (close > 1 && close < 120 && s.sliced(i, close).contains(" pid="))
                return i;
        }
    }
    return -1;
}

// A logger location at the start of s, "[file.py:123]" (vLLM) or "file.py:123]" (older vLLM): its length,
// or 0.
qsizetype loggerLocationLength(QByteArrayView s) {
    const qsizetype from = !s.isEmpty() && s.front() == '[' ? 1 : 0;
    const qsizetype limit = std::min<qsizetype>(s.size(), 120);
    qsizetype colon = -1;
    for (qsizetype i = from; i < limit; ++i) {
        const char c = s[i];
        if (c == ']')
            return colon >= from + 4 && colon + 1 < i && s.sliced(colon - 3, 3) == ".py" ? i + 1 : 0;
        if (c == ':') {
            if (colon > 0)
                return 0;
            colon = i;
        } else if (colon > 0 ? !isDigit(c) : (c == ' ' || c == '\'' || c == '"' || c == '[' || c == '(')) {
            return 0;
        }
    }
    return 0;
}

// vLLM's "LEVEL MM-DD HH:MM:SS [file.py:123] " at the start of s: its length, or 0.
qsizetype vllmRecordHeadLength(QByteArrayView s) {
    const qsizetype level = vllmLevelLength(s);
    if (level == 0)
        return 0;
    qsizetype i = level + 14; // "MM-DD HH:MM:SS"
    i = withFraction(s, i);
    i = skipSpaces(s, i);
    const qsizetype location = loggerLocationLength(s.sliced(i));
    return location > 0 ? i + location : 0;
}

// A process prefix whose opening parenthesis (and maybe more) a paste cut off:
// "VllmWorker rank=2 pid=123) WARNING 03-14 09:12:50 ...": the length up to its ')', or 0. Only with
// nothing that opens or quotes before it and vLLM's level and date right after it.
qsizetype cutProcessPrefixLength(QByteArrayView s) {
    const qsizetype limit = std::min<qsizetype>(s.size(), 120);
    for (qsizetype i = 0; i < limit; ++i) {
        const char c = s[i];
        if (c == '(' || c == '[' || c == '\'' || c == '"')
            return 0;
        if (c != ')')
            continue;
        if (i == 0)
            return 0;
        // With "pid=" left, vLLM's level and date; cut deeper, its whole record head with the location.
        const QByteArrayView after = s.sliced(skipSpaces(s, i + 1));
        return (s.first(i).contains("pid=") ? vllmLevelLength(after) : vllmRecordHeadLength(after)) > 0 ? i
                                                                                                        : 0;
    }
    return 0;
}

LogPrefix scanImpl(QByteArrayView line, bool allowGlued) {
    LogPrefix p;
    qsizetype i = skipSpaces(line, 0);
    // Container runtimes put their own timestamp (and CRI's stream and P/F tag) in front.
    if (const qsizetype iso = isoLength(line.sliced(i)); iso > 0) {
        qsizetype j = skipSpaces(line, i + iso);
        const QByteArrayView rest = line.sliced(j);
        Framework fw = Framework::Unknown;
        if ((rest.startsWith("stdout ") || rest.startsWith("stderr ")) && rest.size() >= 8 &&
            (rest[7] == 'F' || rest[7] == 'P') && (rest.size() == 8 || rest[8] == ' ')) {
            p.time = line.sliced(i, iso);
            i = skipSpaces(line, j + 8);
        } else if (const qsizetype rust = rustTracingLength(rest, &fw); rust > 0) {
            p.time = line.sliced(i, iso);
            p.framework = fw;
            p.messageStart = j + rust;
            p.recognised = true;
            return p;
        } else {
            p.time = line.sliced(i, iso);
            i = j;
        }
        p.recognised = true;
    }
    bool gluedTried = !allowGlued;
    for (int round = 0; round < 8 && i < line.size(); ++round) {
        const QByteArrayView rest = line.sliced(i);
        if (const qsizetype cut = round == 0 ? cutProcessPrefixLength(rest) : 0; cut > 0) {
            p.sourceBytes = rest.first(cut).trimmed();
            p.framework = Framework::VLLM;
            p.recognised = true;
            i = skipSpaces(line, i + cut + 1);
            p.messageStart = i;
            continue;
        }
        if (rest.front() == '(') {
            const qsizetype close = rest.indexOf(')');
            if (close > 1 && close < 120 && rest.first(close).contains("pid=")) {
                // A process prefix inside another one (a Ray or engine wrapper): the inner one names the
                // rank.
                p.sourceBytes = rest.sliced(1, close - 1).trimmed();
                p.framework = Framework::VLLM;
                p.recognised = true;
                i = skipSpaces(line, i + close + 1);
                p.messageStart = i;
                continue;
            }
        } else if (rest.front() == '[') {
            const qsizetype close = rest.indexOf(']');
            if (close > 0 && close <= 120) {
                const QByteArrayView inside = rest.sliced(1, close - 1);
                if (const qsizetype dt = dateTimeLength(inside); dt > 0) {
                    p.time = inside.first(19);
                    p.sourceBytes = inside.sliced(dt).trimmed();
                    p.framework = Framework::SGLang;
                    p.recognised = true;
                    p.messageStart = skipSpaces(line, i + close + 1);
                    return p;
                }
                if (isRankName(inside.trimmed())) {
                    p.sourceBytes = inside.trimmed();
                    p.recognised = true;
                }
                i = skipSpaces(line, i + close + 1); // a tag: look behind it
                p.messageStart = i;
                continue;
            }
        } else if (const qsizetype level = vllmLevelLength(rest); level > 0) {
            p.time = rest.sliced(level, 14);
            if (p.framework == Framework::Unknown)
                p.framework = Framework::VLLM;
            p.recognised = true;
            p.messageStart = i;
            return p;
        } else {
            Framework fw = Framework::Unknown;
            if (const qsizetype py = pythonLoggingLength(rest, &fw); py > 0) {
                if (fw != Framework::Unknown)
                    p.framework = fw;
                p.recognised = true;
                p.messageStart = skipSpaces(line, i + py);
                return p;
            }
            // A bare rank tag: "TP7[] msg", "TP7] msg", "TP7: msg", "TP7| msg".
            qsizetype r = 0;
            while (r < rest.size() && r < 32 && rest[r] != '[' && rest[r] != ']' && rest[r] != ':' &&
                   rest[r] != '|')
                ++r;
            if (r > 0 && r < rest.size() && isRankName(rest.first(r))) {
                p.sourceBytes = rest.first(r);
                p.recognised = true;
                qsizetype j = r;
                if (rest[j] == '[') {
                    const qsizetype close = rest.sliced(j).indexOf(']');
                    j = close >= 0 && close < 64 ? j + close + 1 : j + 1;
                } else {
                    ++j;
                }
                i = skipSpaces(line, i + j);
                p.messageStart = i;
                continue;
            }
        }
        if (!gluedTried && !p.recognised) {
            gluedTried = true;
            if (const qsizetype at = gluedPrefixAt(rest); at > 0) {
                i += at;
                continue;
            }
        }
        break;
    }
    p.messageStart = std::max(p.messageStart, i);
    return p;
}

} // namespace

LogPrefix LogPrefix::parse(QByteArrayView line) {
    LogPrefix p = scan(line);
    p.source = p.sourceBytes.isEmpty() ? u"main"_s : QString::fromUtf8(p.sourceBytes).simplified();
    return p;
}

LogPrefix LogPrefix::scan(QByteArrayView line) {
    return scanImpl(line, true);
}

bool LogPrefix::startsRecord(QByteArrayView line) {
    const QByteArrayView rest = continuation(line);
    if (rest.size() != line.size()) // a container runtime's line: its content decides
        return scanImpl(rest, true).recognised;
    return scanImpl(line, true).recognised;
}

QList<qsizetype> LogPrefix::recordStartsWithin(QByteArrayView line) {
    QList<qsizetype> starts;
    // Past the first record's own prefix: its words are no boundary.
    qsizetype i = std::min(scanImpl(line, false).messageStart, line.size());
    i = std::max<qsizetype>(1, i + vllmRecordHeadLength(line.sliced(i)));
    bool inSingle = false, inDouble = false;
    int depth = 0;
    auto isAlnum = [](char c) { return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    auto boundary = [&](qsizetype at, qsizetype skip) {
        starts.append(at);
        inSingle = inDouble = false;
        depth = 0;
        i = at + skip;
    };
    while (i < line.size()) {
        const char c = line[i];
        if (inDouble) {
            inDouble = c != '"';
            ++i;
            continue;
        }
        if (inSingle) {
            // A closing quote ends a word; an apostrophe inside one ("server's") does not.
            inSingle = !(c == '\'' && (i + 1 == line.size() || !isAlnum(line[i + 1])));
            ++i;
            continue;
        }
        switch (c) {
        case '"':
            inDouble = true;
            break;
        case '\'':
            inSingle = !isAlnum(line[i - 1]);
            break;
        case '(': {
            const QByteArrayView rest = line.sliced(i);
            const qsizetype close = rest.first(std::min<qsizetype>(rest.size(), 120)).indexOf(')');
            if (depth == 0 && close > 1 && rest.first(close).contains(" pid=") &&
                !rest.first(close).contains('\'') && !rest.first(close).contains('"')) {
                const qsizetype head = skipSpaces(rest, close + 1);
                if (const qsizetype record = vllmRecordHeadLength(rest.sliced(head)); record > 0) {
                    boundary(i, head + record);
                    continue;
                }
            }
            ++depth;
            break;
        }
        case ')':
            depth = std::max(0, depth - 1);
            break;
        case '[':
            if (depth == 0 && dateTimeLength(line.sliced(i + 1)) > 0) {
                const qsizetype close =
                    line.sliced(i).first(std::min<qsizetype>(line.size() - i, 64)).indexOf(']');
                if (close > 0) {
                    boundary(i, close + 1);
                    continue;
                }
            }
            break;
        default:
            if (depth == 0 && (line[i - 1] == ' ' || line[i - 1] == '\t')) {
                if (const qsizetype record = vllmRecordHeadLength(line.sliced(i)); record > 0) {
                    boundary(i, record);
                    continue;
                }
            }
            break;
        }
        ++i;
    }
    return starts;
}

QByteArrayView LogPrefix::continuation(QByteArrayView line) {
    const qsizetype i = skipSpaces(line, 0);
    const qsizetype iso = isoLength(line.sliced(i));
    if (iso == 0)
        return line;
    const qsizetype j = skipSpaces(line, i + iso);
    const QByteArrayView rest = line.sliced(j);
    if ((rest.startsWith("stdout ") || rest.startsWith("stderr ")) && rest.size() >= 8 &&
        (rest[7] == 'F' || rest[7] == 'P'))
        return line.sliced(std::min(line.size(), j + 9));
    return line;
}

} // namespace moetune

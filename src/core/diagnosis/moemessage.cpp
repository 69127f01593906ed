// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/moemessage.h"
#include "core/diagnosis/logprefix.h"
#include "core/moe/precompiledregex.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// Paths run up to ".json": config names hold commas and spaces ("block_shape=[128, 128]"). Newer
// vLLM prints the searched paths as a Python list (['<path>', '<path2>']): brackets and quotes are
// not part of a path.
#define MT_PATH "\\[?\\s*['\"]?(.+?\\.json)['\"]?"
#define MT_PATH2 "(?:\\s*,\\s*['\"]?([/~.\\\\].*?\\.json|[A-Za-z]:.*?\\.json)['\"]?)?"
#define MT_SUB "Performance might be sub-optimal!?\\s*"
#define MT_NOTFOUND "Config file not found at\\s*"

struct Pattern {
    MoeMessage::Kind kind;
    QRegularExpression re;
};

const QList<Pattern> &patterns() {
    static const QList<Pattern> list{
        {MoeMessage::Kind::Fallback,
         precompiledRegex(u"" MT_NOTFOUND MT_PATH
                          "\\.?\\s*Fallback to triton version\\s*(\\S+?)\\s+and use MoE kernel "
                          "config from\\s*" MT_PATH ""_s)},
        {MoeMessage::Kind::DefaultKernelConfig,
         precompiledRegex(u"Using default MoE kernel config\\.?\\s*" MT_SUB MT_NOTFOUND MT_PATH ""_s)},
        {MoeMessage::Kind::DownReusesUp,
         precompiledRegex(u"Down MoE config file not found at\\s*" MT_PATH
                          "\\s*;?\\s*reusing the tuned up-projection config"_s)},
        {MoeMessage::Kind::DownMissing,
         precompiledRegex(u"Using MoE kernel config with down_moe=False\\.?\\s*" MT_SUB MT_NOTFOUND MT_PATH
                          ""_s)},
        {MoeMessage::Kind::BlockFp8Default,
         precompiledRegex(u"Using default W8A8 Block FP8 kernel config\\.?\\s*" MT_SUB MT_NOTFOUND MT_PATH
                          ""_s)},
        {MoeMessage::Kind::DefaultConfig,
         precompiledRegex(u"Using default MoE config\\.?\\s*" MT_SUB MT_NOTFOUND MT_PATH MT_PATH2 ""_s)},
        {MoeMessage::Kind::Deterministic,
         precompiledRegex(u"Deterministic inference is enabled, using default MoE kernel config\\.?"_s)},
        {MoeMessage::Kind::ConfigUsed, precompiledRegex(u"Using MoE kernel config from\\s*" MT_PATH ""_s)},
        {MoeMessage::Kind::ConfigUsedVllm,
         precompiledRegex(u"Using configuration from\\s*" MT_PATH "\\s*for MoE layer"_s)},
        // Last: some builds and log levels print the warning without its "not found at" part.
        {MoeMessage::Kind::DefaultNoPath,
         precompiledRegex(
             u"Using default MoE (?:kernel )?config\\.?\\s*Performance might be sub-optimal!?"_s)},
    };
    return list;
}

#undef MT_PATH
#undef MT_PATH2
#undef MT_SUB
#undef MT_NOTFOUND

} // namespace

const QList<QByteArray> &MoeMessage::literals() {
    static const QList<QByteArray> list{"sub-optimal",
                                        "Config file not found",
                                        "MoE kernel config",
                                        "Using configuration from",
                                        "Deterministic inference",
                                        "MoE config file not found"};
    return list;
}

std::optional<MoeMessage> MoeMessage::parse(const QString &line) {
    for (const Pattern &p : patterns()) {
        const QRegularExpressionMatch m = p.re.match(line);
        if (!m.hasMatch())
            continue;
        MoeMessage msg;
        msg.kind = p.kind;
        msg.matchStart = m.capturedStart(0);
        msg.matchLength = m.capturedLength(0);
        switch (p.kind) {
        case Kind::Fallback:
            msg.path = m.captured(1).trimmed();
            msg.fallbackVersion = m.captured(2);
            msg.fallbackPath = m.captured(3).trimmed();
            break;
        case Kind::DefaultConfig:
            msg.path = m.captured(1).trimmed();
            msg.path2 = m.captured(2).trimmed();
            break;
        case Kind::Deterministic:
        case Kind::DefaultNoPath:
            break;
        default:
            msg.path = m.captured(1).trimmed();
            break;
        }
        return msg;
    }
    return std::nullopt;
}

namespace {

// What the server's own formats put between the prefix and the message, token by token.
bool isServerHeader(const QString &gap) {
    static const QRegularExpression header = precompiledRegex(
        u"^\\s*(?:[A-Z][a-z]{2} {1,2}\\d{1,2} \\d\\d:\\d\\d:\\d\\d \\S+ [^\\s:\\[]+(?:\\[\\d+\\])?: )?"
        u"(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|TRACE):?"
        u"|\\d{2,4}-\\d{2}(?:-\\d{2})?"
        u"|\\d{2}:\\d{2}:\\d{2}(?:[.,]\\d+)?"
        u"|\\[[^\\]\\s'\"=()]*\\]:?"
        u"|[\\w.\\-/]+\\.py:\\d+[\\]:]?"
        u"|[-|:]"
        u")?(?:\\s+(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|TRACE):?"
        u"|\\d{2,4}-\\d{2}(?:-\\d{2})?"
        u"|\\d{2}:\\d{2}:\\d{2}(?:[.,]\\d+)?"
        u"|\\[[^\\]\\s'\"=()]*\\]:?"
        u"|[\\w.\\-/]+\\.py:\\d+[\\]:]?"
        u"|[-|:]))*\\s*$"_s);
    return gap.isEmpty() || header.match(gap).hasMatch();
}

} // namespace

bool MoeMessage::isServerMessage(QByteArrayView bytes, const QString &text, const MoeMessage &msg) {
    const LogPrefix prefix = LogPrefix::scan(bytes);
    const qsizetype prefixBytes = std::min(prefix.messageStart, bytes.size());
    // UTF-16 units of the prefix (decoded alone: it ends at an ASCII byte, so as within the line).
    const qsizetype start = QString::fromUtf8(bytes.first(prefixBytes)).size();
    if (msg.matchStart >= start && isServerHeader(text.mid(start, msg.matchStart - start)))
        return true;
    if (prefix.recognised)
        return false; // the line is another message of the server's: the warning is quoted inside it
    // A line that does not start with a prefix: the server's own prefix glued after output without a
    // newline (a progress bar, dots), with nothing in that output that quotes ('"=( ).
    for (qsizetype at = msg.matchStart - 1; at >= 0 && msg.matchStart - at <= 512; --at) {
        if (text[at] != u'[' && text[at] != u'(')
            continue;
        const QByteArray tail = QStringView(text).sliced(at, msg.matchStart - at).toUtf8();
        const LogPrefix glued = LogPrefix::scan(tail);
        if (!glued.recognised)
            continue;
        const qsizetype gluedStart =
            at + QString::fromUtf8(tail.first(std::min(glued.messageStart, tail.size()))).size();
        if (gluedStart > msg.matchStart || !isServerHeader(text.mid(gluedStart, msg.matchStart - gluedStart)))
            continue;
        for (qsizetype i = 0; i < at; ++i) {
            const QChar c = text[i];
            if (c == u'\'' || c == u'"' || c == u'=' || c == u'(')
                return false;
        }
        return true;
    }
    return false;
}

bool MoeMessage::looksIncomplete(QByteArrayView cleaned) {
    // Every "not found" message says "sub-optimal" somewhere; without it the line was cut.
    if ((cleaned.contains("Config file not found") || cleaned.contains("config file not found")) &&
        !cleaned.contains("sub-optimal"))
        return true;
    // "Using default ... sub-optimal! Config file not found at <path>": the path comes after.
    const qsizetype sub = cleaned.lastIndexOf("sub-optimal");
    if (sub >= 0 && !cleaned.contains("Fallback to triton") && !cleaned.contains("reusing the tuned") &&
        !cleaned.sliced(sub).contains(".json"))
        return true;
    static const QByteArrayView markers[] = {"not found at", "kernel config from", "configuration from"};
    qsizetype tailStart = -1;
    for (QByteArrayView marker : markers) {
        const qsizetype at = cleaned.lastIndexOf(marker);
        if (at >= 0)
            tailStart = std::max(tailStart, at + marker.size());
    }
    if (tailStart < 0)
        return false;
    const QByteArrayView tail = cleaned.sliced(tailStart).trimmed();
    // A Python list of paths ends with "']" (a config name's own "[128, 128]" never does).
    if ((tail.startsWith("['") || tail.startsWith("[\"")) && !tail.contains("']") && !tail.contains("\"]"))
        return true;
    const qsizetype json = tail.lastIndexOf(".json");
    if (json < 0)
        return true; // the path itself was cut
    // vLLM prints a second path after ", ": if one started, it must end in ".json" too.
    QByteArrayView rest = tail.sliced(json + 5).trimmed();
    while (!rest.isEmpty() && (rest.front() == '\'' || rest.front() == '"'))
        rest = rest.sliced(1);
    if (!rest.startsWith(','))
        return false;
    rest = rest.sliced(1).trimmed();
    while (!rest.isEmpty() && (rest.front() == '\'' || rest.front() == '"'))
        rest = rest.sliced(1);
    return rest.isEmpty() || rest.front() == '/' || rest.front() == '~' || rest.front() == '.';
}

namespace {

bool isWordByte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// The words of the messages above: a wrap inside one of them glues, a wrap between two of them
// (a terminal that dropped the trailing space on copy) keeps a space.
bool isMessageWord(QByteArrayView w) {
    static const QByteArrayView words[] = {"Using",
                                           "default",
                                           "MoE",
                                           "kernel",
                                           "config",
                                           "Performance",
                                           "might",
                                           "be",
                                           "sub-optimal",
                                           "Config",
                                           "file",
                                           "not",
                                           "found",
                                           "at",
                                           "you",
                                           "can",
                                           "create",
                                           "them",
                                           "with",
                                           "Fallback",
                                           "to",
                                           "triton",
                                           "version",
                                           "and",
                                           "use",
                                           "from",
                                           "Down",
                                           "reusing",
                                           "the",
                                           "tuned",
                                           "up-projection",
                                           "without",
                                           "TMA",
                                           "W8A8",
                                           "Block",
                                           "FP8",
                                           "configuration",
                                           "for",
                                           "layer",
                                           "down_moe=False",
                                           "Deterministic",
                                           "inference",
                                           "is",
                                           "enabled",
                                           "using"};
    while (!w.isEmpty() && !isWordByte(w.back()) && w.back() != '=')
        w.chop(1);
    for (QByteArrayView word : words) {
        if (w == word)
            return true;
    }
    return false;
}

} // namespace

QByteArray MoeMessage::joinWrapped(QByteArrayView first, QByteArrayView next) {
    QByteArray out = first.toByteArray();
    if (first.isEmpty() || next.isEmpty() || first.back() == ' ' || first.back() == '\t' ||
        next.front() == ' ' || next.front() == '\t')
        return out + next;
    const qsizetype space = std::max(first.lastIndexOf(' '), first.lastIndexOf('\t'));
    const QByteArrayView lastToken = first.sliced(space + 1);
    // Inside a path (it has a '/' and has not reached ".json" yet): a wrap never adds a space there.
    const bool inPath = (lastToken.contains('/') || lastToken.contains('\\')) &&
                        !lastToken.endsWith(".json") && !lastToken.endsWith(".json.") &&
                        !lastToken.endsWith(".json,");
    if (inPath)
        return out + next;
    qsizetype end = 0;
    while (end < next.size() && next[end] != ' ' && next[end] != '\t')
        ++end;
    const QByteArrayView firstToken = next.first(end);
    // A word followed by a path ("found at" + "/sgl-workspace/..."): the space was lost.
    const char n0 = next.front();
    if (isWordByte(first.back()) && (n0 == '/' || n0 == '[' || n0 == '\'' || n0 == '~'))
        return out + ' ' + next;
    // Two whole words of a message ("sub-optimal!" + "Config"), not one word cut in two.
    const QByteArray glued = lastToken.toByteArray() + firstToken.toByteArray();
    if (!isMessageWord(glued) && isMessageWord(lastToken) && isMessageWord(firstToken))
        return out + ' ' + next;
    return out + next;
}

} // namespace moetune

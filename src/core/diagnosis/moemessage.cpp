#include "core/diagnosis/moemessage.h"
#include "core/moe/precompiledregex.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// Paths run up to ".json": config names hold commas and spaces ("block_shape=[128, 128]").
#define MT_PATH "(.+?\\.json)"
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
        {MoeMessage::Kind::DownMissing,
         precompiledRegex(u"Using MoE kernel config with down_moe=False\\.?\\s*" MT_SUB MT_NOTFOUND MT_PATH
                          ""_s)},
        {MoeMessage::Kind::BlockFp8Default,
         precompiledRegex(u"Using default W8A8 Block FP8 kernel config\\.?\\s*" MT_SUB MT_NOTFOUND MT_PATH
                          ""_s)},
        {MoeMessage::Kind::DefaultConfig,
         precompiledRegex(u"Using default MoE config\\.?\\s*" MT_SUB MT_NOTFOUND MT_PATH
                          "(?:\\s*,\\s*([/~.\\\\].*?\\.json|[A-Za-z]:.*?\\.json))?"_s)},
        {MoeMessage::Kind::Deterministic,
         precompiledRegex(u"Deterministic inference is enabled, using default MoE kernel config\\.?"_s)},
        {MoeMessage::Kind::ConfigUsed, precompiledRegex(u"Using MoE kernel config from\\s*" MT_PATH ""_s)},
        {MoeMessage::Kind::ConfigUsedVllm,
         precompiledRegex(u"Using configuration from\\s*" MT_PATH "\\s*for MoE layer"_s)},
    };
    return list;
}

#undef MT_PATH
#undef MT_SUB
#undef MT_NOTFOUND

} // namespace

const QList<QByteArray> &MoeMessage::literals() {
    static const QList<QByteArray> list{"sub-optimal", "Config file not found", "MoE kernel config",
                                        "Using configuration from", "Deterministic inference"};
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
            break;
        default:
            msg.path = m.captured(1).trimmed();
            break;
        }
        return msg;
    }
    return std::nullopt;
}

bool MoeMessage::looksIncomplete(QByteArrayView cleaned) {
    // Every "not found" message says "sub-optimal" somewhere; without it the line was cut.
    if (cleaned.contains("Config file not found") && !cleaned.contains("sub-optimal"))
        return true;
    // "Using default ... sub-optimal! Config file not found at <path>": the path comes after.
    const qsizetype sub = cleaned.lastIndexOf("sub-optimal");
    if (sub >= 0 && !cleaned.contains("Fallback to triton") && !cleaned.sliced(sub).contains(".json"))
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
    const QByteArrayView tail = cleaned.sliced(tailStart);
    const qsizetype json = tail.lastIndexOf(".json");
    if (json < 0)
        return true; // the path itself was cut
    // vLLM prints a second path after ", ": if one started, it must end in ".json" too.
    QByteArrayView rest = tail.sliced(json + 5).trimmed();
    if (!rest.startsWith(','))
        return false;
    rest = rest.sliced(1).trimmed();
    return rest.isEmpty() || rest.front() == '/' || rest.front() == '~' || rest.front() == '.';
}

} // namespace moetune

// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunejobcheck.h"

#include "core/moe/configname.h"

using namespace Qt::StringLiterals;

namespace moetune {

std::optional<QList<int>> TuneJobCheck::parseList(const QString &text, bool allowAll, QString *error) {
    const QString t = text.trimmed();
    if (allowAll && (t.isEmpty() || t == "all"_L1))
        return QList<int>{};
    QList<int> out;
    for (const QString &part : t.split(u',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const int v = part.trimmed().toInt(&ok);
        if (!ok || v < (allowAll ? 0 : 1)) {
            *error = u"'%1' is not a %2 number."_s.arg(part.trimmed(), allowAll ? u"GPU"_s : u"positive"_s);
            return std::nullopt;
        }
        if (!out.contains(v))
            out.append(v);
    }
    if (out.isEmpty() && !allowAll) {
        *error = u"Give at least one batch size, e.g. 1,16,256."_s;
        return std::nullopt;
    }
    return out;
}

TuneJobCheck TuneJobCheck::check(const TuneSpec &s, const std::optional<TuningTarget> &target) {
    TuneJobCheck c;
    auto add = [&c](const char *field, const QString &sentence) {
        c.problems.append({QString::fromLatin1(field), sentence});
    };
    if (s.framework == Framework::Unknown)
        add("frameworkCombo", u"Choose the server the files are for (SGLang or vLLM)."_s);
    if (s.experts <= 0)
        add("expertsSpin", u"E must be at least 1: the local experts, as in the file name."_s);
    if (s.n <= 0)
        add("nSpin",
            u"N must be the per-rank size: moe_intermediate_size / TP (Qwen3-30B-A3B at TP2: 384)."_s);
    if (s.hiddenSize <= 0)
        add("kSpin", u"K is unknown: enter the model's hidden_size."_s);
    if (s.topk <= 0 || (s.experts > 0 && s.topk > s.experts))
        add("topkSpin",
            u"top-k must be between 1 and E (%1): experts per token, num_experts_per_tok."_s.arg(s.experts));
    if (target && s.experts > 0 && s.n > 0) {
        if (target->name.n != s.n)
            add("nSpin",
                u"N is %1 but the server wanted N=%2: a file for another N is never read (N is per rank: "
                u"moe_intermediate_size / TP)."_s.arg(s.n)
                    .arg(target->name.n));
        if (target->name.experts != s.experts)
            add("expertsSpin",
                u"E is %1 but the server wanted E=%2 (SGLang counts a fused shared expert)."_s.arg(s.experts)
                    .arg(target->name.experts));
    }
    if (s.upAndDown && s.framework == Framework::VLLM)
        add("upDownCheck", u"vLLM has no separate down file: tune up only."_s);
    if (s.perChannelQuant && s.framework == Framework::VLLM)
        add("perChannelCheck", u"per_channel_quant names exist in SGLang only."_s);
    if (s.timeBudgetSeconds < 0)
        add("budgetSpin", u"The time budget must be positive, or 0 for none."_s);

    ConfigName name;
    name.experts = s.experts;
    name.n = s.n;
    // No device name: the agent names the file after the GPU it runs on.
    name.deviceName = s.deviceName.isEmpty() ? u"<the host's GPU>"_s : s.deviceName;
    name.dtype = s.dtype;
    name.blockShape = s.blockShape;
    name.perChannelQuant = s.perChannelQuant;
    const Framework dialect = s.framework == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
    c.fileNames.append(name.fileName(dialect));
    if (s.upAndDown && dialect == Framework::SGLang) {
        ConfigName down = name;
        down.down = true;
        c.fileNames.append(down.fileName(dialect));
    }
    if (target) {
        ConfigName wanted = target->name;
        wanted.down = false;
        const QString w = wanted.fileName(dialect);
        c.namesMatch = w == c.fileNames.first();
        if (c.namesMatch) {
            c.fileNamesMatch =
                u"Matches the file the server looked for in %1."_s.arg(target->installFolder());
            if (target->downMissing && !s.upAndDown && dialect == Framework::SGLang)
                c.fileNamesMatch +=
                    u" The server also missed the _down file: tick \"up and down\" to tune it too."_s;
        } else {
            c.fileNamesMatch = u"The server looks for %1, not %2: it would never read this file."_s.arg(
                w, c.fileNames.first());
        }
    }
    return c;
}

} // namespace moetune

// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/job/jobcheck.h"

#include "core/moe/configname.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// A device name becomes part of a file name: no control, bidirectional or other invisible characters.
std::optional<QChar> badDeviceChar(const QString &name) {
    for (const QChar c : name) {
        const auto cat = c.category();
        if (c.unicode() < 0x20 || c == u'/' || c == u'\\' || cat == QChar::Other_Control ||
            cat == QChar::Other_Format || cat == QChar::Separator_Line || cat == QChar::Separator_Paragraph)
            return c;
    }
    return std::nullopt;
}

// The file name the spec's shape gets, on a device of that name (the spec's own, else a stand-in).
ConfigName nameOf(const TuneSpec &s, const QString &deviceWhenUnnamed) {
    ConfigName name;
    name.experts = s.experts;
    name.n = s.n;
    name.deviceName = s.deviceName.isEmpty() ? deviceWhenUnnamed : s.deviceName;
    name.dtype = s.dtype;
    name.blockShape = s.blockShape;
    name.perChannelQuant = s.perChannelQuant;
    return name;
}

} // namespace

std::optional<QList<int>> JobCheck::parseList(const QString &text, bool allowAll, QString *error) {
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

JobCheck JobCheck::check(const TuneSpec &s, const std::optional<TuningTarget> &target) {
    JobCheck c;
    auto add = [&c](Field field, const QString &sentence) { c.problems.append({field, sentence}); };
    if (s.framework == Framework::Unknown)
        add(Field::Framework, u"Choose the server framework the files are for (SGLang or vLLM)."_s);
    if (s.experts <= 0)
        add(Field::Experts, u"E must be at least 1: the local experts, as in the file name."_s);
    if (s.n <= 0)
        add(Field::N,
            u"N must be the per-rank size: moe_intermediate_size / TP (Qwen3-30B-A3B at TP2: 384)."_s);
    if (s.hiddenSize <= 0)
        add(Field::K, u"K is unknown: enter the model's hidden size (hidden_size in its config.json)."_s);
    if (s.topk <= 0 || (s.experts > 0 && s.topk > s.experts))
        add(Field::Topk,
            u"top-k must be between 1 and E (%1): experts per token, num_experts_per_tok."_s.arg(s.experts));
    if (target && s.experts > 0 && s.n > 0) {
        if (target->name.n != s.n)
            add(Field::N, u"N is %1 but the server wanted N=%2: a file for another N is never read (N is per "
                          u"rank: moe_intermediate_size / TP)."_s.arg(s.n)
                              .arg(target->name.n));
        if (target->name.experts != s.experts)
            add(Field::Experts,
                u"E is %1 but the server wanted E=%2 (SGLang counts a fused shared expert)."_s.arg(s.experts)
                    .arg(target->name.experts));
    }
    if (s.upAndDown && s.framework == Framework::VLLM)
        add(Field::UpAndDown, u"vLLM has no separate down file: tune up only."_s);
    if (s.perChannelQuant && s.framework == Framework::VLLM)
        add(Field::PerChannel, u"per_channel_quant names exist in SGLang only."_s);
    if (s.timeBudgetSeconds < 0)
        add(Field::TimeBudget, u"The time budget must be positive, or 0 for none."_s);
    if (s.batchSizes.isEmpty())
        add(Field::BatchSizes, u"Give at least one batch size, e.g. 1,16,256."_s);
    for (int m : s.batchSizes) {
        if (m <= 0) {
            add(Field::BatchSizes, u"Batch sizes must be positive (got %1)."_s.arg(m));
            break;
        }
        // The agent's own limits (remote_agent spec.py MAX_BATCH_SIZE, MAX_BATCH_SIZES): said here, before
        // a start that the agent would refuse.
        if (m > 65536) {
            add(Field::BatchSizes,
                u"Batch size %1 is more than the agent tunes: at most 65536 tokens per MoE call (the "
                u"servers' own lists end at 4096)."_s.arg(m));
            break;
        }
    }
    if (s.batchSizes.size() > 256)
        add(Field::BatchSizes, u"At most 256 batch sizes per run (got %1)."_s.arg(s.batchSizes.size()));
    if (s.blockShape && ((*s.blockShape)[0] < 0 || (*s.blockShape)[1] <= 0))
        add(Field::BlockShape, u"The block shape must be two positive integers, or [0, group] for "
                               u"group-quantised weights."_s);
    if (s.strategy.isEmpty())
        add(Field::Strategy, u"Choose a strategy."_s);
    if (const auto bad = badDeviceChar(s.deviceName)) {
        add(Field::DeviceName,
            u"The device name may not hold control, bidirectional or other invisible characters, slashes or "
            u"line breaks (U+%1 found): it becomes part of a file name."_s.arg(
                QString::number(bad->unicode(), 16).toUpper().rightJustified(4, u'0')));
    } else if (s.experts > 0 && s.n > 0) {
        // The longest name the run writes (the _down file, SGLang's spelling) plus the suffixes of its
        // backup and temporary files must fit a file name (255 bytes): checked here, not after the sweep.
        ConfigName longest = nameOf(s, u"SIMULATED_GPU"_s);
        longest.down = true;
        const qsizetype bytes = longest.fileName(Framework::SGLang).toUtf8().size();
        if (bytes > TuneSpec::kMaxConfigNameBytes)
            add(Field::DeviceName,
                u"The config file name would be %1 bytes long (%2 at most, to leave room for its backup and "
                u"temporary names within the 255-byte limit of a file name): shorten the device name (%3 "
                u"characters)."_s.arg(bytes)
                    .arg(TuneSpec::kMaxConfigNameBytes)
                    .arg(s.deviceName.size()));
    }

    // No device name: the agent names the file after the GPU it runs on.
    const ConfigName name = nameOf(s, u"<the host's GPU>"_s);
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

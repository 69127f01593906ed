// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/moekernelverdict.h"

#include "core/diagnosis/moerule.h"
#include "core/job/tuningtarget.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

using Configs = MoeBackend::Configs;

struct Resolved {
    MoeKernelSighting sighting;
    MoeKernelUse use;
};

bool tritonRuns(Configs c) {
    return c == Configs::Used || c == Configs::Auto;
}

QString capitalised(QString s) {
    if (!s.isEmpty())
        s[0] = s[0].toUpper();
    return s;
}

// "MARLIN (Fp8)": the name and scheme as the log printed them.
QString label(const MoeKernelUse &u) {
    return u.backend + (u.scheme.isEmpty() ? QString() : u" ("_s + u.scheme + u')');
}

// "the fp8 MoE layers" / "the MoE layers"
QString layersOf(const MoeKernelUse &u) {
    if (u.scheme.isEmpty())
        return u"the MoE layers"_s;
    return u"the "_s + u.scheme.toLower() + u" MoE layers"_s;
}

QString shortVerdict(Configs c) {
    switch (c) {
    case Configs::Used:
        return u"its Triton config files decide its speed"_s;
    case Configs::Unused:
        return u"no Triton config file is read, tuning would not change its speed"_s;
    case Configs::Partly:
        return u"Triton config files matter only for the shapes it hands to Triton"_s;
    case Configs::Auto:
        return u"chosen by SGLang, the Triton fused-MoE kernel on Hopper/Ampere"_s;
    case Configs::Ignored:
        return u"config files ignored, tuning changes nothing"_s;
    case Configs::Unknown:
        break;
    }
    return u"not in moetune's rules: whether it reads Triton config files is not known"_s;
}

QString sentence(const MoeKernelUse &u, const QString &note) {
    const QString k = u.kernel;
    QString s;
    switch (u.configs) {
    case Configs::Used:
        s = k + u" runs "_s + layersOf(u) + u": its config files decide its speed."_s;
        break;
    case Configs::Unused:
        s = k + u" runs "_s + layersOf(u) +
            u": no Triton config file is read for them; tuning would not change their speed."_s;
        break;
    case Configs::Partly:
        s = k + u" runs "_s + layersOf(u) +
            u" and hands the shapes it rejects (N <= 512, or sizes it cannot align) to the Triton fused-MoE "
            "kernel: the config files decide the speed of those shapes only."_s;
        break;
    case Configs::Auto:
        s = k +
            u": on Hopper, Ampere, Ada, SM120 and ROCm without AITER that is the Triton fused-MoE kernel, "
            "whose config files decide its speed; the config lookups in this log show where it runs."_s;
        break;
    case Configs::Ignored:
        s = k + u" runs "_s + layersOf(u) +
            u" with its built-in defaults and ignores every config file; tuning would not change its speed."_s;
        break;
    case Configs::Unknown:
        s = k + u" runs "_s + layersOf(u) +
            u": no rule file says whether it reads Triton config files (describe it in a rule file's "
            "moe_backends list)."_s;
        break;
    }
    if (u.kernel != u.backend) // a printed name keeps its case ("flashinfer_trtllm")
        s = capitalised(s);
    if (!note.isEmpty())
        s += u' ' + note;
    return s;
}

// The config dtype of a file name as the scheme vLLM's backend line names (docs/servers.md sections 2, 9).
QString schemeOf(const TuningTarget &t) {
    const QString &dtype = t.name.dtype;
    if (dtype.isEmpty())
        return u"UNQUANTIZED"_s;
    if (dtype == u"fp8_w8a8"_s)
        return u"FP8"_s;
    if (dtype == u"int4_w4a16"_s || dtype == u"int8_w8a16"_s)
        return u"WNA16"_s;
    return MoeBackend::normalise(dtype);
}

QString dtypeText(const TuningTarget &t) {
    return t.name.dtype.isEmpty() ? u"bf16/fp16"_s : t.name.dtype;
}

QString lineText(qint64 line) {
    return line > 0 ? u", line "_s + QString::number(line) : QString();
}

// A GPU of the Hopper or Ampere generation, by the name the server writes into config names.
bool isHopperOrAmpere(const QString &device) {
    static const QStringList names{u"H100"_s, u"H200"_s, u"H800"_s, u"H20"_s, u"GH200"_s, u"A100"_s,
                                   u"A800"_s, u"A10"_s,  u"A30"_s,  u"A40"_s, u"A6000"_s};
    const QStringList words = QString(device).replace(u'-', u'_').split(u'_', Qt::SkipEmptyParts);
    return std::any_of(words.begin(), words.end(), [](const QString &w) { return names.contains(w); });
}

// What moetune assumes about a lookup's kernel when the log names none: only the Triton fused-MoE kernel
// prints these lookups; whether it is the server's default depends on the GPU and the dtype.
QString assumedKernelNote(const std::optional<TuningTarget> &target) {
    const QString base =
        u" The log does not say which MoE kernel runs; moetune assumes the Triton fused-MoE kernel, whose "
        "config lookup printed this line"_s;
    if (!target)
        return base + u'.';
    const bool bf16 = target->name.dtype.isEmpty();
    if (bf16 && isHopperOrAmpere(target->name.deviceName))
        return base + u" (the default on Hopper/Ampere for bf16)."_s;
    const QString gpu = target->name.deviceName.isEmpty() ? u"an unnamed GPU"_s : target->name.deviceName;
    return base + u". On "_s + gpu + u" with "_s + dtypeText(*target) +
           u" layers the server may pick another kernel for the main layers (FlashInfer, CUTLASS, DeepGEMM, "
           "MARLIN), so the lookup may concern only some layers; a line that names the MoE backend says "
           "which."_s;
}

void lower(Finding &f, const QString &titleNote, const QString &why) {
    if (f.severity == Severity::Warning)
        f.severity = Severity::Info;
    f.title += u" ("_s + titleNote + u')';
    f.explanation += u' ' + why + u" moetune lowers this warning to info."_s;
    f.advice = u"Low urgency: "_s + f.advice;
}

} // namespace

bool MoeKernelVerdict::isLookup(const QString &rule) {
    const MoeRuleRow *row = MoeRules::find(rule);
    return row && row->lookup;
}

QList<MoeKernelUse> MoeKernelVerdict::judge(const QList<MoeKernelSighting> &sightings,
                                            const QList<MoeBackend> &table,
                                            const QList<Finding *> &findings) {
    QList<Resolved> main;
    QList<Resolved> partial; // lines about some layers only (DeepGEMM's Triton fallback)
    for (const MoeKernelSighting &s : sightings) {
        Resolved r{s, {}};
        r.use.backend = s.backend;
        r.use.scheme = s.scheme;
        r.use.line = s.line;
        const std::optional<MoeBackend> b = MoeBackend::find(table, s.backend, s.scheme);
        r.use.configs = b ? b->configs : Configs::Unknown;
        r.use.kernel = b && !b->kernel.isEmpty() ? b->kernel : s.backend;
        (s.layers.isEmpty() ? main : partial).append(r);
    }
    // A start that names a kernel of its own overrides SGLang's 'auto'; the Triton experts class line
    // repeats the TRITON backend line.
    const bool concrete = std::any_of(main.begin(), main.end(),
                                      [](const Resolved &r) { return r.use.configs != Configs::Auto; });
    const bool tritonScoped = std::any_of(main.begin(), main.end(), [](const Resolved &r) {
        return r.use.configs == Configs::Used && !r.use.scheme.isEmpty();
    });
    QList<Resolved> effective;
    QList<MoeKernelUse> uses;
    for (const Resolved &r : std::as_const(main)) {
        if (concrete && r.use.configs == Configs::Auto)
            continue;
        if (tritonScoped && r.use.configs == Configs::Used && r.use.scheme.isEmpty())
            continue;
        effective.append(r);
        uses.append(r.use);
    }
    const bool ignored = std::any_of(effective.begin(), effective.end(),
                                     [](const Resolved &r) { return r.use.configs == Configs::Ignored; });

    for (Finding *f : findings) {
        if (MoeRules::is(f->rule, MoeRule::Kernel)) {
            QStringList labels, sentences, advice;
            for (const Resolved &r : std::as_const(effective)) {
                labels << label(r.use);
                const std::optional<MoeBackend> b = MoeBackend::find(table, r.use.backend, r.use.scheme);
                sentences << sentence(r.use, b ? b->note : QString());
            }
            if (effective.isEmpty() && !partial.isEmpty()) // only a line about some shapes
                f->title = u"MoE kernel of some layers: "_s + partial.front().sighting.layers;
            else if (effective.size() == 1)
                f->title =
                    u"MoE kernel "_s + labels.front() + u": "_s + shortVerdict(effective.front().use.configs);
            else
                f->title = u"MoE kernels: "_s + labels.join(u", "_s);
            for (const Resolved &r : std::as_const(partial))
                sentences << u"The log also shows "_s + r.sighting.layers + u" (line "_s +
                                 QString::number(r.sighting.line) + u")."_s;
            QStringList said;
            for (const QList<Resolved> *list : {&main, &partial}) {
                for (const Resolved &r : *list) {
                    if (!r.sighting.explanation.isEmpty() && !said.contains(r.sighting.explanation))
                        said << r.sighting.explanation;
                }
            }
            f->explanation = (sentences + said).join(u' ');
            const bool anyTriton = std::any_of(effective.begin(), effective.end(), [](const Resolved &r) {
                return r.use.configs != Configs::Unused && r.use.configs != Configs::Ignored;
            });
            if (ignored)
                f->advice =
                    u"Restart without --enable-deterministic-inference if reproducible outputs are not "
                    "needed; while it is on, tuning changes nothing."_s;
            else if (!anyTriton && partial.isEmpty())
                f->advice =
                    u"No Triton config to tune for these layers. Tune only lookups that the log still "
                    u"reports "
                    "(their findings say which layers they concern); to compare kernels, force one with "
                    "--moe-backend (vLLM) or --moe-runner-backend (SGLang)."_s;
            else
                f->advice =
                    u"Tune the shapes whose config lookups this start reports (their findings); restart "
                    "the server after installing the files so that it reads them."_s;
            continue;
        }
        if (!isLookup(f->rule))
            continue;
        if (sightings.isEmpty()) {
            f->explanation += assumedKernelNote(f->target);
            continue;
        }
        if (effective.isEmpty())
            continue; // only lines about some layers: nothing about the main kernel
        if (ignored) {
            const Resolved &r = *std::find_if(effective.begin(), effective.end(), [](const Resolved &x) {
                return x.use.configs == Configs::Ignored;
            });
            lower(
                *f, u"ignored: deterministic inference"_s,
                u"Deterministic inference is on (line "_s + QString::number(r.use.line) +
                    u"): the loader ignores every tuned config, so tuning changes nothing while it is on."_s);
            continue;
        }
        const QString scheme = f->target ? schemeOf(*f->target) : QString();
        QList<const Resolved *> candidates;
        for (const Resolved &r : std::as_const(effective)) {
            if (!scheme.isEmpty() && MoeBackend::normalise(r.use.scheme) == scheme)
                candidates << &r;
        }
        if (candidates.isEmpty()) {
            for (const Resolved &r : std::as_const(effective)) {
                if (r.use.scheme.isEmpty() || scheme.isEmpty())
                    candidates << &r;
            }
        }
        auto any = [&candidates](auto pred) {
            return std::find_if(candidates.begin(), candidates.end(), pred);
        };
        if (candidates.isEmpty()) {
            // The log names kernels for other dtypes only: these layers are of another dtype.
            if (std::any_of(effective.begin(), effective.end(),
                            [](const Resolved &r) { return tritonRuns(r.use.configs); }))
                continue;
            QStringList named;
            for (const Resolved &r : std::as_const(effective))
                named << label(r.use) + lineText(r.use.line);
            const QString dtype = dtypeText(*f->target);
            lower(*f, dtype + u" layers only; "_s + effective.front().use.backend + u" runs the others"_s,
                  u"The log names the MoE kernel only for other layers ("_s + named.join(u"; "_s) +
                      u"); this lookup is for "_s + dtype +
                      u" MoE layers, which still run the Triton fused-MoE kernel: for example a draft/NextN "
                      "layer. Tuning it speeds those layers only."_s);
            continue;
        }
        if (const auto it = any([](const Resolved *r) { return tritonRuns(r->use.configs); });
            it != candidates.end())
            continue; // the Triton kernel runs these layers: its config decides their speed
        if (const auto it = any([](const Resolved *r) { return r->use.configs == Configs::Unknown; });
            it != candidates.end()) {
            f->explanation +=
                u" The log names the MoE backend "_s + label((*it)->use) + u" (line "_s +
                QString::number((*it)->use.line) +
                u"), which no rule file describes: whether it reads Triton config files moetune "
                "cannot tell (describe it in a rule file's moe_backends list)."_s;
            continue;
        }
        if (const auto it = any([](const Resolved *r) { return r->use.configs == Configs::Partly; });
            it != candidates.end()) {
            const MoeKernelUse &u = (*it)->use;
            const int n = f->target ? f->target->name.n : 0;
            const auto shown = std::find_if(partial.begin(), partial.end(),
                                            [n](const Resolved &p) { return n > 0 && p.sighting.n == n; });
            if (shown != partial.end()) {
                f->explanation +=
                    u" "_s + u.backend + u" runs "_s + layersOf(u) + u" (line "_s + QString::number(u.line) +
                    u"), but the log shows it handing this shape (N="_s + QString::number(n) +
                    u") to the Triton fused-MoE kernel (line "_s + QString::number(shown->sighting.line) +
                    u"): this config decides the speed of these layers."_s;
                continue;
            }
            lower(
                *f, u"only shapes "_s + u.backend + u" hands to Triton"_s,
                u"The log says "_s + u.backend + u" runs "_s + layersOf(u) + u" (line "_s +
                    QString::number(u.line) +
                    u"); it hands the Triton fused-MoE kernel only the shapes it rejects (N <= 512, or sizes "
                    "it cannot align), so this config decides the speed of those alone."_s);
            continue;
        }
        const MoeKernelUse &u = candidates.front()->use;
        lower(*f, u"not the layers "_s + u.backend + u" runs"_s,
              u"The log says "_s + u.kernel + u" runs "_s + layersOf(u) + u" (line "_s +
                  QString::number(u.line) +
                  u") and reads no Triton config file for them; this lookup comes from MoE layers that still "
                  "run the Triton kernel, for example a draft/NextN layer, so tuning it speeds those layers "
                  "only."_s);
    }
    return uses;
}

QString MoeKernelVerdict::summaryNote(const Diagnosis &d, bool hasJobs) {
    const QList<MoeKernelUse> uses = d.starts.isEmpty() ? QList<MoeKernelUse>{} : d.starts.back().moeKernels;
    if (uses.isEmpty())
        return hasJobs ? u"; the log does not name the MoE kernel (Triton fused MoE assumed)"_s : QString();
    QStringList parts;
    for (const MoeKernelUse &u : uses)
        parts << label(u) + u": "_s + shortVerdict(u.configs);
    QString note = (uses.size() == 1 ? u"; MoE kernel "_s : u"; MoE kernels "_s) + parts.join(u"; "_s);
    const bool lowered = std::any_of(d.findings.begin(), d.findings.end(), [&d](const Finding &f) {
        return d.isLatest(f) && f.target && isLookup(f.rule) && f.severity == Severity::Info;
    });
    if (hasJobs && lowered)
        note += u" (the untuned configs concern only layers it does not run: low urgency)"_s;
    return note;
}

} // namespace moetune

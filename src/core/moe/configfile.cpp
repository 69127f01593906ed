// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/moe/configfile.h"
#include "core/util/errorout.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>
#include <QVariant>

#include <cmath>
#include <limits>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

const QString kTritonVersionKey = u"triton_version"_s;

bool isPowerOfTwo(int v) {
    return v > 0 && (v & (v - 1)) == 0;
}

std::optional<int> toInt(const QJsonValue &v) {
    if (!v.isDouble())
        return std::nullopt;
    const double d = v.toDouble();
    if (std::floor(d) != d || d < std::numeric_limits<int>::min() || d > std::numeric_limits<int>::max())
        return std::nullopt;
    return static_cast<int>(d);
}

// Line and column of a byte offset, for parse errors a person can find in an editor.
QString position(const QByteArray &json, qsizetype offset) {
    offset = std::clamp<qsizetype>(offset, 0, json.size());
    const QByteArrayView before(json.constData(), offset);
    const qsizetype line = before.count('\n') + 1;
    const qsizetype lastNl = before.lastIndexOf('\n');
    return u"line "_s + QString::number(line) + u", column "_s + QString::number(offset - lastNl);
}

bool parseEntry(const QString &key, const QJsonValue &value, KernelConfig *out, QString *error) {
    if (!value.isObject())
        return failWith(error, u"The value of batch size \""_s + key +
                                   u"\" is not an object of kernel parameters."_s);
    const QJsonObject o = value.toObject();
    struct Field {
        QLatin1StringView name;
        int *target;
        bool powerOfTwo;
    };
    const Field fields[] = {
        {"BLOCK_SIZE_M"_L1, &out->blockSizeM, true}, {"BLOCK_SIZE_N"_L1, &out->blockSizeN, true},
        {"BLOCK_SIZE_K"_L1, &out->blockSizeK, true}, {"GROUP_SIZE_M"_L1, &out->groupSizeM, false},
        {"num_warps"_L1, &out->numWarps, true},      {"num_stages"_L1, &out->numStages, false},
    };
    for (const Field &f : fields) {
        const QJsonValue v = o.value(f.name);
        const QString where = u"batch size \""_s + key + u"\": "_s + f.name;
        if (v.isUndefined())
            return failWith(error, u"Missing field "_s + f.name + u" in batch size \""_s + key + u"\"."_s);
        const std::optional<int> i = toInt(v);
        if (!i)
            return failWith(error,
                            where + u" must be an integer, not "_s +
                                QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact))
                                    .mid(1)
                                    .chopped(1) +
                                u'.');
        if (*i < 1)
            return failWith(error, where + u" must be at least 1, not "_s + QString::number(*i) + u'.');
        if (f.powerOfTwo && !isPowerOfTwo(*i))
            return failWith(error, where + u" must be a power of two, not "_s + QString::number(*i) + u'.');
        *f.target = *i;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        const QString &k = it.key();
        bool known = false;
        for (const Field &f : fields)
            known = known || k == f.name;
        if (known)
            continue;
        if (k == "USE_TMA"_L1) {
            if (!it.value().isBool())
                return failWith(error, u"batch size \""_s + key + u"\": USE_TMA must be true or false."_s);
            out->useTma = it.value().toBool();
            continue;
        }
        out->extra.insert(k, it.value());
    }
    return true;
}

// Python's json.dumps of a scalar.
QByteArray scalarJson(const QJsonValue &v) {
    if (v.isBool())
        return v.toBool() ? "true" : "false";
    if (v.isNull())
        return "null";
    if (v.isDouble()) {
        // A JSON integer token is kept as a 64-bit integer: write it exactly, as json.dumps does with an int.
        if (const QVariant exact = v.toVariant(); exact.typeId() == QMetaType::LongLong)
            return QByteArray::number(exact.toLongLong());
        const double d = v.toDouble();
        if (std::floor(d) == d && std::abs(d) < 1e15)
            return QByteArray::number(static_cast<qint64>(d));
        return QByteArray::number(d, 'g', 17);
    }
    // Strings, arrays and objects: compact JSON is close to Python's for the simple values tuners write.
    const QByteArray wrapped = QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact);
    return wrapped.mid(1, wrapped.size() - 2);
}

} // namespace

std::optional<ConfigFile> ConfigFile::parse(const QByteArray &json, QString *error) {
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError) {
        failWith(error,
                 u"Not valid JSON ("_s + pe.errorString() + u" at "_s + position(json, pe.offset) + u")."_s);
        return std::nullopt;
    }
    if (!doc.isObject()) {
        failWith(error, u"A config file must be a JSON object mapping batch sizes to kernel parameters."_s);
        return std::nullopt;
    }
    ConfigFile file;
    const QJsonObject root = doc.object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        const QString &key = it.key();
        if (key == kTritonVersionKey) {
            if (!it.value().isString()) {
                failWith(error, u"\"triton_version\" must be a string such as \"3.6.0\"."_s);
                return std::nullopt;
            }
            file.tritonVersion = it.value().toString();
            continue;
        }
        bool ok = false;
        const int m = key.toInt(&ok);
        if (!ok || m < 1 || key != QString::number(m)) {
            failWith(error, u"Key \""_s + key +
                                u"\" is not a batch size (a positive decimal integer such as \"64\")."_s);
            return std::nullopt;
        }
        KernelConfig config;
        if (!parseEntry(key, it.value(), &config, error))
            return std::nullopt;
        file.entries.insert(m, config);
    }
    if (file.entries.isEmpty()) {
        failWith(error, u"The config file has no batch-size entries."_s);
        return std::nullopt;
    }
    return file;
}

QByteArray ConfigFile::toJson(Framework dialect) const {
    QByteArray out;
    out.reserve(64 + entries.size() * 220);
    out += "{";
    bool first = true;
    auto beginKey = [&](const QByteArray &key) {
        out += first ? "\n    \"" : ",\n    \"";
        first = false;
        out += key;
        out += "\": ";
    };
    // vLLM's tuner puts the Triton version first (json.dump({"triton_version": ..., **configs})).
    if (dialect == Framework::VLLM && !tritonVersion.isEmpty()) {
        beginKey(kTritonVersionKey.toUtf8());
        out += scalarJson(QJsonValue(tritonVersion));
    }
    for (auto it = entries.cbegin(); it != entries.cend(); ++it) {
        beginKey(QByteArray::number(it.key()));
        const KernelConfig &c = it.value();
        out += "{\n        \"BLOCK_SIZE_M\": " + QByteArray::number(c.blockSizeM);
        out += ",\n        \"BLOCK_SIZE_N\": " + QByteArray::number(c.blockSizeN);
        out += ",\n        \"BLOCK_SIZE_K\": " + QByteArray::number(c.blockSizeK);
        out += ",\n        \"GROUP_SIZE_M\": " + QByteArray::number(c.groupSizeM);
        out += ",\n        \"num_warps\": " + QByteArray::number(c.numWarps);
        out += ",\n        \"num_stages\": " + QByteArray::number(c.numStages);
        if (c.useTma)
            out += QByteArray(",\n        \"USE_TMA\": ") + (*c.useTma ? "true" : "false");
        // ROCm keys in the order vLLM's sort_config writes them, then anything else alphabetically.
        static const QLatin1StringView rocmOrder[] = {"waves_per_eu"_L1, "matrix_instr_nonkdim"_L1,
                                                      "kpack"_L1};
        for (QLatin1StringView k : rocmOrder) {
            if (c.extra.contains(k))
                out +=
                    ",\n        \"" + QByteArray(k.data(), k.size()) + "\": " + scalarJson(c.extra.value(k));
        }
        for (auto e = c.extra.begin(); e != c.extra.end(); ++e) {
            if (e.key() == rocmOrder[0] || e.key() == rocmOrder[1] || e.key() == rocmOrder[2])
                continue;
            out += ",\n        " + scalarJson(QJsonValue(e.key())) + ": " + scalarJson(e.value());
        }
        out += "\n    }";
    }
    out += first ? "}\n" : "\n}\n";
    return out;
}

const KernelConfig *ConfigFile::nearest(int m) const {
    const KernelConfig *best = nullptr;
    qint64 bestDistance = std::numeric_limits<qint64>::max();
    // Ascending keys and a strict '<' keep the smaller key on a tie, like Python's min() over sorted keys.
    for (auto it = entries.cbegin(); it != entries.cend(); ++it) {
        const qint64 d = std::abs(static_cast<qint64>(it.key()) - m);
        if (d < bestDistance) {
            bestDistance = d;
            best = &it.value();
        }
    }
    return best;
}

} // namespace moetune

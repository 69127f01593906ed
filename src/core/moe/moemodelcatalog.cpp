// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/moe/moemodelcatalog.h"

#include "core/util/coreresources.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

using namespace Qt::StringLiterals;

namespace moetune {

QString MoeModelCatalog::userFolder() {
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + u"/models"_s;
}

MoeModelCatalog MoeModelCatalog::fromJson(const QByteArray &json, const QString &file, QString *error) {
    MoeModelCatalog c;
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (!doc.isObject() || doc.object().value("format"_L1).toString() != "moetune-moe-models"_L1) {
        if (error)
            *error =
                pe.error != QJsonParseError::NoError
                    ? u"%1: not valid JSON (%2)"_s.arg(file, pe.errorString())
                    : u"%1: not a moetune model list ({\"format\": \"moetune-moe-models\", ...})"_s.arg(file);
        return c;
    }
    const QJsonArray models = doc.object().value("models"_L1).toArray();
    for (qsizetype i = 0; i < models.size(); ++i) {
        const QJsonObject o = models.at(i).toObject();
        Model m;
        for (const QJsonValue n : o.value("names"_L1).toArray())
            if (!n.toString().trimmed().isEmpty())
                m.names.append(n.toString().trimmed());
        m.hiddenSize = o.value("hidden_size"_L1).toInt();
        m.experts = o.value("experts"_L1).toInt();
        m.topk = o.value("top_k"_L1).toInt();
        m.moeIntermediateSize = o.value("moe_intermediate_size"_L1).toInt();
        m.sharedExperts = o.value("shared_experts"_L1).toInt();
        m.file = file;
        if (m.names.isEmpty() || m.hiddenSize <= 0 || m.experts <= 0 || m.topk <= 0 || m.topk > m.experts) {
            if (error)
                *error =
                    u"%1: model %2 needs names, hidden_size, experts and top_k (1..experts)"_s.arg(file).arg(
                        i + 1);
            continue;
        }
        c.m_models.append(m);
    }
    return c;
}

MoeModelCatalog MoeModelCatalog::load(QStringList *errors) {
    MoeModelCatalog all;
    const QDir user(userFolder());
    for (const QString &name : user.entryList({u"*.json"_s}, QDir::Files, QDir::Name)) {
        QFile f(user.filePath(name));
        QString error;
        const MoeModelCatalog c = f.open(QIODevice::ReadOnly) && f.size() < qint64(4) * 1024 * 1024
                                      ? fromJson(f.readAll(), f.fileName(), &error)
                                      : MoeModelCatalog{};
        if (!f.isOpen())
            error = u"%1: %2"_s.arg(f.fileName(), f.errorString());
        all.m_models += c.m_models;
        if (!error.isEmpty() && errors)
            errors->append(error);
    }
    ensureCoreResources();
    QFile bundled(u":/moetune/models/moe-models.json"_s);
    QString error;
    if (bundled.open(QIODevice::ReadOnly))
        all.m_models += fromJson(bundled.readAll(), bundled.fileName(), &error).m_models;
    if (!error.isEmpty() && errors)
        errors->append(error);
    return all;
}

std::optional<MoeModelCatalog::Model> MoeModelCatalog::find(const QString &modelPath) const {
    QString base = modelPath.trimmed();
    while (base.endsWith(u'/'))
        base.chop(1);
    base = base.section(u'/', -1);
    const Model *best = nullptr;
    qsizetype bestLength = 0;
    for (const Model &m : m_models) {
        for (const QString &n : m.names) {
            // Longer names win (GLM-4.5-Air over GLM-4.5); on a tie the first read (a user file) wins.
            if (n.size() > bestLength && base.startsWith(n, Qt::CaseInsensitive)) {
                best = &m;
                bestLength = n.size();
            }
        }
    }
    return best ? std::optional<Model>(*best) : std::nullopt;
}

std::optional<MoeModelCatalog::Model> MoeModelCatalog::findForShape(const QString &modelPath,
                                                                    int fileExperts) const {
    auto m = find(modelPath);
    if (m && (m->experts == fileExperts || m->experts + 1 == fileExperts))
        return m;
    return std::nullopt;
}

} // namespace moetune

// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/job/tuningtarget.h"

#include <QAbstractTableModel>
#include <QList>

#include <optional>

namespace moetune {

// The parsed fields of one TuningTarget as "field | value" rows for the details pane.
class TargetFieldsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { FieldColumn, ValueColumn, ColumnCount };
    enum Role { KeyRole = Qt::UserRole + 1, ProblemRole };

    explicit TargetFieldsModel(QObject *parent = nullptr);

    void setTarget(const std::optional<TuningTarget> &target);
    bool hasTarget() const { return !m_rows.isEmpty(); }
    // The value shown for a key ("framework", "experts", "n", "device", "dtype", "blockShape",
    // "perChannelQuant", "triton", "tritonFolder", "fallbackFolder", "up", "down", "configRoot",
    // "upPath", "downPath"); empty when the row is absent.
    QString value(const QString &key) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString key;
        QString label;
        QString value;
        bool problem = false; // shown in the error colour: something is missing
        bool path = false;    // shown in a monospace font
    };
    QList<Row> m_rows;
};

} // namespace moetune

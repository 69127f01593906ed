#pragma once

#include "core/tuning/runprogress.h"

#include <QAbstractTableModel>
#include <QMap>

namespace moetune {

// The Tune page's live table: per batch size the best so far, the default config's latency, the
// speedup and the HBM floor (when the run's result gave it). Rebuilt from a RunProgress; rows only grow
// while a run streams, so views keep their selection.
class TuneBestModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { BatchSize, Best, Default, Speedup, Floor, ColumnCount };

    explicit TuneBestModel(QObject *parent = nullptr);
    void setProgress(const RunProgress &progress);
    void setFloors(const QMap<int, double> &floorUs); // m -> us
    void clear();

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        int m = 0;
        double best = 0;
        double def = 0;
    };
    QList<Row> m_rows;
    QMap<int, double> m_floors;
    bool m_simulated = false;
};

} // namespace moetune

// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostfoldermodel.h"

#include "app/widgets/severitystyle.h"

#include <QFont>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

HostFolderModel::HostFolderModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void HostFolderModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

void HostFolderModel::setProbe(const HostProbe &probe) {
    beginResetModel();
    m_rows.clear();
    if (probe.framework == Framework::VLLM) {
        // vLLM has no version folders: one flat folder (and the user's, when set).
        if (!probe.configRoot.isEmpty())
            m_rows.append({u"configs/"_s, probe.configFiles, false, true});
    } else {
        QList<TritonFolder> folders = probe.tritonFolders;
        std::stable_sort(folders.begin(), folders.end(), [](const TritonFolder &a, const TritonFolder &b) {
            if (a.version && b.version)
                return *a.version > *b.version;
            return a.version.has_value() && !b.version.has_value();
        });
        const QString installed = probe.installedTritonFolder();
        bool found = false;
        for (const TritonFolder &f : std::as_const(folders)) {
            const bool isInstalled = f.name == installed;
            found = found || isInstalled;
            m_rows.append({f.name, f.files, isInstalled, true});
        }
        if (!installed.isEmpty() && !found && probe.framework == Framework::SGLang) {
            // The folder the server looks in first is the news: it goes on top.
            m_rows.prepend({installed, {}, true, false});
        }
    }
    endResetModel();
}

int HostFolderModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int HostFolderModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HostFolderModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &r = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case FolderColumn:
            return r.name;
        case FilesColumn:
            return r.present ? tr("%n config file(s)", nullptr, int(r.files.size())) : tr("-");
        case StatusColumn:
            if (!r.installed)
                return r.present ? tr("fallback candidate") : QString();
            return r.present ? tr("installed Triton: present") : tr("installed Triton: MISSING");
        }
        break;
    case Qt::ToolTipRole:
        if (!r.present)
            return tr("The server looks for its configs in %1 first. It does not exist, so every shape "
                      "falls back to an older folder or to the built-in defaults.")
                .arg(r.name);
        return r.files.isEmpty() ? tr("No config files") : r.files.join(u'\n');
    case Qt::DecorationRole:
        if (index.column() == StatusColumn && r.installed)
            return SeverityStyle::icon(r.present ? Severity::Info : Severity::Warning);
        break;
    case Qt::FontRole:
        if (r.installed) {
            QFont font;
            font.setBold(true);
            return font;
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == StatusColumn && r.installed && !r.present)
            return SeverityStyle::color(Severity::Warning);
        break;
    case InstalledRole:
        return r.installed;
    case PresentRole:
        return r.present;
    default:
        break;
    }
    return {};
}

QVariant HostFolderModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case FolderColumn:
        return tr("Folder");
    case FilesColumn:
        return tr("Files");
    case StatusColumn:
        return tr("Status");
    }
    return {};
}

} // namespace moetune

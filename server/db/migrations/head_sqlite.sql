-- The schema of a new SQLite database at the migrations' heads: what running every migration makes.
-- Written by `python -m server.db.head_schema` (do not edit); a first start makes its database from
-- it while the heads below are the scripts' heads (server/db/migration_child.py, create_at_head).
-- heads: 0013_search_rated
BEGIN;
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
CREATE TABLE activity_log (
	id INTEGER NOT NULL, 
	name VARCHAR NOT NULL, 
	overview VARCHAR, 
	short_overview VARCHAR, 
	type VARCHAR NOT NULL, 
	item_id VARCHAR, 
	user_id VARCHAR, 
	date DATETIME NOT NULL, 
	severity VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE api_keys (
	id INTEGER NOT NULL, 
	access_token VARCHAR NOT NULL, 
	name VARCHAR NOT NULL, 
	date_created DATETIME NOT NULL, 
	date_last_activity DATETIME NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE device_options (
	device_id VARCHAR NOT NULL, 
	custom_name VARCHAR, 
	PRIMARY KEY (device_id)
);
CREATE TABLE display_preferences (
	user_id VARCHAR NOT NULL, 
	preferences_id VARCHAR NOT NULL, 
	client VARCHAR NOT NULL, 
	data_json VARCHAR NOT NULL, 
	PRIMARY KEY (user_id, preferences_id, client)
);
CREATE TABLE task_results (
	task_key VARCHAR NOT NULL, 
	last_result_json VARCHAR, 
	triggers_json VARCHAR, 
	PRIMARY KEY (task_key)
);
CREATE TABLE users (
	id VARCHAR(32) NOT NULL, 
	name VARCHAR NOT NULL, 
	password_hash VARCHAR, 
	policy_json VARCHAR NOT NULL, 
	configuration_json VARCHAR NOT NULL, 
	date_created DATETIME NOT NULL, 
	last_login_date DATETIME, 
	last_activity_date DATETIME, 
	invalid_login_attempts INTEGER NOT NULL, 
	primary_image_path VARCHAR, 
	primary_image_tag VARCHAR, 
	PRIMARY KEY (id)
);
CREATE TABLE devices (
	id INTEGER NOT NULL, 
	access_token VARCHAR NOT NULL, 
	user_id VARCHAR NOT NULL, 
	device_id VARCHAR NOT NULL, 
	device_name VARCHAR NOT NULL, 
	app_name VARCHAR NOT NULL, 
	app_version VARCHAR NOT NULL, 
	date_created DATETIME NOT NULL, 
	date_last_activity DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE items (
	id VARCHAR(32) NOT NULL, 
	type VARCHAR NOT NULL, 
	media_type VARCHAR NOT NULL, 
	is_folder BOOLEAN NOT NULL, 
	library_id VARCHAR, 
	parent_id VARCHAR, 
	path VARCHAR, 
	name VARCHAR NOT NULL, 
	sort_name VARCHAR NOT NULL, 
	forced_sort_name VARCHAR, 
	original_title VARCHAR, 
	overview VARCHAR, 
	tagline VARCHAR, 
	official_rating VARCHAR, 
	community_rating FLOAT, 
	critic_rating FLOAT, 
	production_year INTEGER, 
	premiere_date DATETIME, 
	end_date DATETIME, 
	date_created DATETIME NOT NULL, 
	date_modified DATETIME, 
	run_time_ticks INTEGER, 
	size INTEGER, 
	container VARCHAR, 
	bitrate INTEGER, 
	width INTEGER, 
	height INTEGER, 
	video_type VARCHAR, 
	extra_type VARCHAR, 
	owner_id VARCHAR, 
	index_number INTEGER, 
	index_number_end INTEGER, 
	parent_index_number INTEGER, 
	series_id VARCHAR, 
	series_name VARCHAR, 
	season_id VARCHAR, 
	season_name VARCHAR, 
	album_id VARCHAR, 
	album VARCHAR, 
	genres_json VARCHAR NOT NULL, 
	studios_json VARCHAR NOT NULL, 
	tags_json VARCHAR NOT NULL, 
	artists_json VARCHAR NOT NULL, 
	album_artists_json VARCHAR NOT NULL, 
	provider_ids_json VARCHAR NOT NULL, 
	media_streams_json VARCHAR NOT NULL, 
	chapters_json VARCHAR NOT NULL, 
	images_json VARCHAR NOT NULL, 
	lyrics_path VARCHAR, 
	file_size INTEGER, 
	file_mtime FLOAT, 
	is_locked BOOLEAN NOT NULL, 
	locked_fields_json VARCHAR NOT NULL, 
	is_virtual BOOLEAN NOT NULL, status VARCHAR, scan_signature VARCHAR, fingerprint VARCHAR, 
	PRIMARY KEY (id)
);
CREATE TABLE libraries (
	id VARCHAR(32) NOT NULL, 
	name VARCHAR NOT NULL, 
	collection_type VARCHAR, 
	options_json VARCHAR NOT NULL, 
	date_created DATETIME NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE people (
	id VARCHAR(32) NOT NULL, 
	name VARCHAR NOT NULL, 
	sort_name VARCHAR NOT NULL, 
	image_path VARCHAR, 
	image_tag VARCHAR, 
	provider_ids_json VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE item_people (
	item_id VARCHAR NOT NULL, 
	person_id VARCHAR NOT NULL, 
	kind VARCHAR NOT NULL, 
	role VARCHAR, 
	sort_order INTEGER NOT NULL, 
	PRIMARY KEY (item_id, person_id, kind), 
	FOREIGN KEY(item_id) REFERENCES items (id) ON DELETE CASCADE, 
	FOREIGN KEY(person_id) REFERENCES people (id) ON DELETE CASCADE
);
CREATE TABLE item_values (
	item_id VARCHAR NOT NULL, 
	kind VARCHAR NOT NULL, 
	clean_value VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	PRIMARY KEY (item_id, kind, clean_value), 
	FOREIGN KEY(item_id) REFERENCES items (id) ON DELETE CASCADE
);
CREATE TABLE library_paths (
	library_id VARCHAR NOT NULL, 
	path VARCHAR NOT NULL, 
	network_path VARCHAR, 
	PRIMARY KEY (library_id, path), 
	FOREIGN KEY(library_id) REFERENCES libraries (id) ON DELETE CASCADE
);
CREATE TABLE user_data (
	user_id VARCHAR NOT NULL, 
	item_id VARCHAR NOT NULL, 
	played BOOLEAN NOT NULL, 
	play_count INTEGER NOT NULL, 
	is_favorite BOOLEAN NOT NULL, 
	playback_position_ticks INTEGER NOT NULL, 
	last_played_date DATETIME, 
	rating FLOAT, 
	likes BOOLEAN, 
	audio_stream_index INTEGER, 
	subtitle_stream_index INTEGER, 
	PRIMARY KEY (user_id, item_id), 
	FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE item_search (rowid INTEGER PRIMARY KEY, item_id TEXT NOT NULL UNIQUE, name TEXT, original_title TEXT);
CREATE VIRTUAL TABLE item_search_fts USING fts5(name, original_title, content='item_search', content_rowid='rowid', tokenize='trigram');
CREATE TABLE trickplay_info (
	item_id VARCHAR(32) NOT NULL, 
	width INTEGER NOT NULL, 
	height INTEGER NOT NULL, 
	tile_width INTEGER NOT NULL, 
	tile_height INTEGER NOT NULL, 
	thumbnail_count INTEGER NOT NULL, 
	interval INTEGER NOT NULL, 
	bandwidth INTEGER NOT NULL, 
	signature VARCHAR NOT NULL, 
	PRIMARY KEY (item_id, width)
);
CREATE TABLE media_probes (
	item_id VARCHAR(32) NOT NULL, 
	size INTEGER NOT NULL, 
	mtime FLOAT NOT NULL, 
	data_json VARCHAR NOT NULL, 
	PRIMARY KEY (item_id)
);
CREATE TABLE scan_units (
	library_id VARCHAR NOT NULL, 
	path VARCHAR NOT NULL, 
	signature VARCHAR NOT NULL, 
	PRIMARY KEY (library_id, path), 
	FOREIGN KEY(library_id) REFERENCES libraries (id) ON DELETE CASCADE
);
CREATE TABLE livetv_series_timers (
	id VARCHAR(32) NOT NULL, 
	name VARCHAR NOT NULL, 
	channel_id VARCHAR, 
	program_id VARCHAR, 
	record_any_time BOOLEAN NOT NULL, 
	record_any_channel BOOLEAN NOT NULL, 
	record_new_only BOOLEAN NOT NULL, 
	days_json VARCHAR NOT NULL, 
	pre_padding_seconds INTEGER NOT NULL, 
	post_padding_seconds INTEGER NOT NULL, 
	priority INTEGER NOT NULL, 
	keep_up_to INTEGER NOT NULL, 
	keep_until VARCHAR NOT NULL, 
	date_created DATETIME NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE livetv_timers (
	id VARCHAR(32) NOT NULL, 
	series_timer_id VARCHAR, 
	channel_id VARCHAR NOT NULL, 
	program_id VARCHAR, 
	name VARCHAR NOT NULL, 
	overview VARCHAR, 
	start_date DATETIME NOT NULL, 
	end_date DATETIME NOT NULL, 
	pre_padding_seconds INTEGER NOT NULL, 
	post_padding_seconds INTEGER NOT NULL, 
	priority INTEGER NOT NULL, 
	keep_until VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	recording_path VARCHAR, 
	error VARCHAR, 
	date_created DATETIME NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE playlists (
	id VARCHAR(32) NOT NULL, 
	owner_user_id VARCHAR, 
	is_public BOOLEAN NOT NULL, 
	media_type VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE playlist_entries (
	id VARCHAR(32) NOT NULL, 
	playlist_id VARCHAR NOT NULL, 
	item_id VARCHAR NOT NULL, 
	sort_order INTEGER NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(playlist_id) REFERENCES playlists (id) ON DELETE CASCADE
);
CREATE TABLE playlist_users (
	playlist_id VARCHAR NOT NULL, 
	user_id VARCHAR NOT NULL, 
	can_edit BOOLEAN NOT NULL, 
	PRIMARY KEY (playlist_id, user_id), 
	FOREIGN KEY(playlist_id) REFERENCES playlists (id) ON DELETE CASCADE, 
	FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE collection_items (
	collection_id VARCHAR(32) NOT NULL, 
	item_id VARCHAR(32) NOT NULL, 
	sort_order INTEGER NOT NULL, 
	date_added DATETIME NOT NULL, 
	PRIMARY KEY (collection_id, item_id)
);
CREATE TABLE byname_artwork (
	id VARCHAR(32) NOT NULL, 
	kind VARCHAR NOT NULL, 
	name VARCHAR NOT NULL, 
	images_json VARCHAR NOT NULL, 
	"key" VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE item_value_counts (
	kind VARCHAR NOT NULL, 
	clean_value VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	library_id VARCHAR NOT NULL, 
	item_type VARCHAR NOT NULL, 
	item_count INTEGER NOT NULL, 
	PRIMARY KEY (kind, clean_value, value, library_id, item_type)
);
CREATE TABLE item_field_counts (
	facet VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	library_id VARCHAR NOT NULL, 
	item_type VARCHAR NOT NULL, 
	item_count INTEGER NOT NULL, 
	PRIMARY KEY (facet, value, library_id, item_type)
);
CREATE INDEX ix_activity_log_date ON activity_log (date);
CREATE INDEX ix_activity_log_user_id ON activity_log (user_id);
CREATE UNIQUE INDEX ix_api_keys_access_token ON api_keys (access_token);
CREATE UNIQUE INDEX ix_users_name ON users (name);
CREATE UNIQUE INDEX ix_devices_access_token ON devices (access_token);
CREATE INDEX ix_devices_device_id ON devices (device_id);
CREATE INDEX ix_devices_user_id ON devices (user_id);
CREATE INDEX ix_items_album_id ON items (album_id);
CREATE INDEX ix_items_date_created ON items (date_created);
CREATE INDEX ix_items_library_id ON items (library_id);
CREATE INDEX ix_items_library_type_created ON items (library_id, type, date_created);
CREATE INDEX ix_items_owner_id ON items (owner_id);
CREATE INDEX ix_items_parent_id ON items (parent_id);
CREATE INDEX ix_items_parent_sort_name ON items (parent_id, sort_name);
CREATE INDEX ix_items_path ON items (path);
CREATE INDEX ix_items_premiere_date ON items (premiere_date);
CREATE INDEX ix_items_production_year ON items (production_year);
CREATE INDEX ix_items_season_id ON items (season_id);
CREATE INDEX ix_items_series_id ON items (series_id);
CREATE INDEX ix_items_sort_name ON items (sort_name);
CREATE INDEX ix_items_type ON items (type);
CREATE INDEX ix_items_type_sort_name ON items (type, sort_name);
CREATE UNIQUE INDEX ix_libraries_name ON libraries (name);
CREATE UNIQUE INDEX ix_people_name ON people (name);
CREATE INDEX ix_item_values_kind_clean ON item_values (kind, clean_value);
CREATE INDEX ix_user_data_item_id ON user_data (item_id);
CREATE INDEX ix_user_data_last_played_date ON user_data (last_played_date);
CREATE INDEX ix_user_data_user_played ON user_data (user_id, last_played_date);
CREATE INDEX ix_items_library_type_owner_sort ON items (library_id, type, owner_id, sort_name, id);
CREATE INDEX ix_items_series_sort_name ON items (series_id, sort_name);
CREATE INDEX ix_items_album_sort_name ON items (album_id, sort_name);
CREATE INDEX ix_item_people_person ON item_people (person_id, kind);
CREATE INDEX ix_user_data_user_favorite ON user_data (user_id, is_favorite);
CREATE INDEX ix_items_scope ON items (id, library_id, type, owner_id, is_folder, media_type, production_year, official_rating);
CREATE INDEX ix_items_library_facets ON items (library_id, type, owner_id, official_rating, production_year);
CREATE INDEX ix_item_values_listing ON item_values (kind, clean_value, item_id, value);
CREATE INDEX ix_items_library_sort_date_created ON items (library_id, type, owner_id, date_created, id);
CREATE INDEX ix_items_library_sort_premiere_date ON items (library_id, type, owner_id, premiere_date, id);
CREATE INDEX ix_items_library_sort_production_year ON items (library_id, type, owner_id, production_year, id);
CREATE INDEX ix_items_library_sort_community_rating ON items (library_id, type, owner_id, community_rating, id);
CREATE INDEX ix_items_library_sort_run_time_ticks ON items (library_id, type, owner_id, run_time_ticks, id);
CREATE INDEX ix_items_fingerprint ON items (fingerprint);
CREATE INDEX ix_livetv_timers_series_timer_id ON livetv_timers (series_timer_id);
CREATE INDEX ix_livetv_timers_status_start ON livetv_timers (status, start_date);
CREATE INDEX ix_playlists_owner_user_id ON playlists (owner_user_id);
CREATE INDEX ix_playlist_entries_item_id ON playlist_entries (item_id);
CREATE INDEX ix_collection_items_collection_order ON collection_items (collection_id, sort_order);
CREATE INDEX ix_collection_items_item_id ON collection_items (item_id);
CREATE INDEX ix_item_value_counts_type ON item_value_counts (item_type, kind);
CREATE INDEX ix_item_field_counts_type ON item_field_counts (item_type, facet);
CREATE INDEX ix_items_episode_order ON items (series_id, type, owner_id, coalesce(parent_index_number, 1), coalesce(index_number, 0), sort_name, id, is_virtual) WHERE series_id IS NOT NULL;
CREATE INDEX ix_people_lower_name ON people (lower(name));
CREATE INDEX ix_playlist_entries_listing ON playlist_entries (playlist_id, sort_order, id, item_id);
CREATE INDEX ix_items_search_rated ON items (id, type, owner_id, sort_name, name, official_rating, series_id, library_id);
CREATE TRIGGER item_search_ai AFTER INSERT ON item_search BEGIN INSERT INTO item_search_fts(rowid, name, original_title) VALUES (new.rowid, new.name, new.original_title); END;
CREATE TRIGGER item_search_ad AFTER DELETE ON item_search BEGIN INSERT INTO item_search_fts(item_search_fts, rowid, name, original_title) VALUES ('delete', old.rowid, old.name, old.original_title); END;
CREATE TRIGGER item_search_au AFTER UPDATE ON item_search BEGIN INSERT INTO item_search_fts(item_search_fts, rowid, name, original_title) VALUES ('delete', old.rowid, old.name, old.original_title); INSERT INTO item_search_fts(rowid, name, original_title) VALUES (new.rowid, new.name, new.original_title); END;
CREATE TRIGGER items_search_ai AFTER INSERT ON items BEGIN INSERT OR REPLACE INTO item_search(item_id, name, original_title) VALUES (new.id, new.name, new.original_title); END;
CREATE TRIGGER items_search_ad AFTER DELETE ON items BEGIN DELETE FROM item_search WHERE item_id = old.id; END;
CREATE TRIGGER items_search_au AFTER UPDATE OF id, name, original_title ON items WHEN new.name IS NOT old.name OR new.original_title IS NOT old.original_title OR new.id IS NOT old.id BEGIN DELETE FROM item_search WHERE item_id = old.id; INSERT OR REPLACE INTO item_search(item_id, name, original_title) VALUES (new.id, new.name, new.original_title); END;
CREATE TRIGGER item_value_counts_bi BEFORE INSERT ON item_values BEGIN
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT NEW.kind, NEW.clean_value, NEW.value, coalesce(i.library_id, ''), i.type, 1 FROM items i WHERE i.id = NEW.item_id AND i.owner_id IS NULL ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', NEW.clean_value, '', coalesce(i.library_id, ''), i.type, 1 FROM items i WHERE i.id = NEW.item_id AND i.owner_id IS NULL AND NEW.kind IN ('Artist', 'AlbumArtist') AND (SELECT count(*) FROM item_values o WHERE o.item_id = NEW.item_id AND o.clean_value = NEW.clean_value AND o.kind IN ('Artist', 'AlbumArtist')) = 0 ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
END;
CREATE TRIGGER item_value_counts_bd BEFORE DELETE ON item_values BEGIN
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT OLD.kind, OLD.clean_value, OLD.value, coalesce(i.library_id, ''), i.type, -1 FROM items i WHERE i.id = OLD.item_id AND i.owner_id IS NULL ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', OLD.clean_value, '', coalesce(i.library_id, ''), i.type, -1 FROM items i WHERE i.id = OLD.item_id AND i.owner_id IS NULL AND OLD.kind IN ('Artist', 'AlbumArtist') AND (SELECT count(*) FROM item_values o WHERE o.item_id = OLD.item_id AND o.clean_value = OLD.clean_value AND o.kind IN ('Artist', 'AlbumArtist')) = 1 ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
END;
CREATE TRIGGER item_value_counts_bu BEFORE UPDATE ON item_values BEGIN
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT OLD.kind, OLD.clean_value, OLD.value, coalesce(i.library_id, ''), i.type, -1 FROM items i WHERE i.id = OLD.item_id AND i.owner_id IS NULL ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', OLD.clean_value, '', coalesce(i.library_id, ''), i.type, -1 FROM items i WHERE i.id = OLD.item_id AND i.owner_id IS NULL AND OLD.kind IN ('Artist', 'AlbumArtist') AND (SELECT count(*) FROM item_values o WHERE o.item_id = OLD.item_id AND o.clean_value = OLD.clean_value AND o.kind IN ('Artist', 'AlbumArtist')) = 1 AND NOT (OLD.item_id = NEW.item_id AND OLD.clean_value = NEW.clean_value AND OLD.kind IN ('Artist', 'AlbumArtist') AND NEW.kind IN ('Artist', 'AlbumArtist')) ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT NEW.kind, NEW.clean_value, NEW.value, coalesce(i.library_id, ''), i.type, 1 FROM items i WHERE i.id = NEW.item_id AND i.owner_id IS NULL ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', NEW.clean_value, '', coalesce(i.library_id, ''), i.type, 1 FROM items i WHERE i.id = NEW.item_id AND i.owner_id IS NULL AND NEW.kind IN ('Artist', 'AlbumArtist') AND (SELECT count(*) FROM item_values o WHERE o.item_id = NEW.item_id AND o.clean_value = NEW.clean_value AND o.kind IN ('Artist', 'AlbumArtist')) = 0 AND NOT (OLD.item_id = NEW.item_id AND OLD.clean_value = NEW.clean_value AND OLD.kind IN ('Artist', 'AlbumArtist') AND NEW.kind IN ('Artist', 'AlbumArtist')) ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
END;
CREATE TRIGGER items_counts_ai AFTER INSERT ON items BEGIN
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT v.kind, v.clean_value, v.value, coalesce(NEW.library_id, ''), NEW.type, 1 FROM item_values v WHERE v.item_id = NEW.id AND NEW.owner_id IS NULL AND 1 = 1 ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', v.clean_value, '', coalesce(NEW.library_id, ''), NEW.type, 1 FROM item_values v WHERE v.item_id = NEW.id AND NEW.owner_id IS NULL AND v.kind IN ('Artist', 'AlbumArtist') AND 1 = 1 GROUP BY v.clean_value ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'Year', CAST(NEW.production_year AS TEXT), coalesce(NEW.library_id, ''), NEW.type, 1 WHERE NEW.production_year IS NOT NULL AND NEW.owner_id IS NULL AND 1 = 1 ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'OfficialRating', NEW.official_rating, coalesce(NEW.library_id, ''), NEW.type, 1 WHERE NEW.official_rating IS NOT NULL AND NEW.official_rating <> '' AND NEW.owner_id IS NULL AND 1 = 1 ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
END;
CREATE TRIGGER items_counts_bd BEFORE DELETE ON items BEGIN
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT v.kind, v.clean_value, v.value, coalesce(OLD.library_id, ''), OLD.type, -1 FROM item_values v WHERE v.item_id = OLD.id AND OLD.owner_id IS NULL AND 1 = 1 ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', v.clean_value, '', coalesce(OLD.library_id, ''), OLD.type, -1 FROM item_values v WHERE v.item_id = OLD.id AND OLD.owner_id IS NULL AND v.kind IN ('Artist', 'AlbumArtist') AND 1 = 1 GROUP BY v.clean_value ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'Year', CAST(OLD.production_year AS TEXT), coalesce(OLD.library_id, ''), OLD.type, -1 WHERE OLD.production_year IS NOT NULL AND OLD.owner_id IS NULL AND 1 = 1 ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'OfficialRating', OLD.official_rating, coalesce(OLD.library_id, ''), OLD.type, -1 WHERE OLD.official_rating IS NOT NULL AND OLD.official_rating <> '' AND OLD.owner_id IS NULL AND 1 = 1 ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
END;
CREATE TRIGGER items_counts_au AFTER UPDATE OF library_id, type, owner_id, production_year, official_rating ON items BEGIN
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT v.kind, v.clean_value, v.value, coalesce(OLD.library_id, ''), OLD.type, -1 FROM item_values v WHERE v.item_id = OLD.id AND OLD.owner_id IS NULL AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id) ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', v.clean_value, '', coalesce(OLD.library_id, ''), OLD.type, -1 FROM item_values v WHERE v.item_id = OLD.id AND OLD.owner_id IS NULL AND v.kind IN ('Artist', 'AlbumArtist') AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id) GROUP BY v.clean_value ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT v.kind, v.clean_value, v.value, coalesce(NEW.library_id, ''), NEW.type, 1 FROM item_values v WHERE v.item_id = NEW.id AND NEW.owner_id IS NULL AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id) ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_value_counts (kind, clean_value, value, library_id, item_type, item_count) SELECT 'AnyArtist', v.clean_value, '', coalesce(NEW.library_id, ''), NEW.type, 1 FROM item_values v WHERE v.item_id = NEW.id AND NEW.owner_id IS NULL AND v.kind IN ('Artist', 'AlbumArtist') AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id) GROUP BY v.clean_value ON CONFLICT (kind, clean_value, value, library_id, item_type) DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'Year', CAST(OLD.production_year AS TEXT), coalesce(OLD.library_id, ''), OLD.type, -1 WHERE OLD.production_year IS NOT NULL AND OLD.owner_id IS NULL AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id OR OLD.production_year IS NOT NEW.production_year OR OLD.official_rating IS NOT NEW.official_rating) ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'OfficialRating', OLD.official_rating, coalesce(OLD.library_id, ''), OLD.type, -1 WHERE OLD.official_rating IS NOT NULL AND OLD.official_rating <> '' AND OLD.owner_id IS NULL AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id OR OLD.production_year IS NOT NEW.production_year OR OLD.official_rating IS NOT NEW.official_rating) ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'Year', CAST(NEW.production_year AS TEXT), coalesce(NEW.library_id, ''), NEW.type, 1 WHERE NEW.production_year IS NOT NULL AND NEW.owner_id IS NULL AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id OR OLD.production_year IS NOT NEW.production_year OR OLD.official_rating IS NOT NEW.official_rating) ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
  INSERT INTO item_field_counts (facet, value, library_id, item_type, item_count) SELECT 'OfficialRating', NEW.official_rating, coalesce(NEW.library_id, ''), NEW.type, 1 WHERE NEW.official_rating IS NOT NULL AND NEW.official_rating <> '' AND NEW.owner_id IS NULL AND (OLD.library_id IS NOT NEW.library_id OR OLD.type IS NOT NEW.type OR OLD.owner_id IS NOT NEW.owner_id OR OLD.production_year IS NOT NEW.production_year OR OLD.official_rating IS NOT NEW.official_rating) ON CONFLICT (facet, value, library_id, item_type) DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count;
END;
INSERT INTO "alembic_version" VALUES ('0013_search_rated');
INSERT INTO "item_search_fts"("item_search_fts") VALUES ('rebuild');
COMMIT;

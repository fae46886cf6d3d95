SELECT * FROM fleet.main.vehicle_utilisation ORDER BY vehicle_id;
